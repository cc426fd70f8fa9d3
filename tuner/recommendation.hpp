// tuner/recommendation.hpp — scoring every valid point of the search space with the model and
// choosing: the best point, its runners-up, the speed-up over the single-process baseline (one
// process on all cores) and over the common rule of thumb (4 processes per node), the winner's
// bottleneck and band. When the top candidates lie within each other's bands the model cannot
// tell them apart: the simpler one is chosen (fewer processes, SMT off, all-reduce) and the
// answer says so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "model/predictor.hpp"
#include "tuner/search_space.hpp"

namespace dnntune::tuner {

enum class Objective { throughput, time_to_train, images_per_node };

struct RecommendOptions {
  Objective objective = Objective::throughput;
  double epochs = 90;                        // time_to_train
  std::int64_t dataset_images = 1281167;     // time_to_train: ImageNet-1k's training set
  int runners_up = 4;
};

struct RankedPoint {
  model::Prediction prediction;
  double score = 0;  // larger is better
};

struct Recommendation {
  Objective objective = Objective::throughput;
  RankedPoint best;
  std::vector<RankedPoint> ranking;          // every valid point, best score first (best included)
  std::optional<model::Prediction> single_process;  // 1 process x all cores, the winner's batch
  std::optional<model::Prediction> rule_of_thumb;   // 4 processes per node (or as many as cores)
  bool tied_within_band = false;             // the winner's band overlaps the top score's
  std::string choice_note;                   // why the winner, when it is not simply the top score
  std::size_t space_size = 0;                // points enumerated
  std::vector<ExcludedPoint> excluded;
  double seconds_to_train = 0;               // time_to_train: epochs x dataset / images/s
};

Expected<Recommendation> recommend(const model::Predictor& predictor, const workloads::Network& network,
                                   const SearchSpaceOptions& space_options, const RecommendOptions& options);

// "throughput", "time-to-train", "images-per-node"
std::string objective_name(Objective objective);

}  // namespace dnntune::tuner
