// tuner/recommendation.hpp — scoring every valid point of the search space with the model and
// choosing: the best point, its runners-up, the speed-up over the single-process baseline (one
// process on all cores) and over the common rule of thumb (4 processes per node), the winner's
// bottleneck and band. When the top candidates lie within each other's bands the model cannot
// tell them apart: the simpler one is chosen (fewer processes, SMT off, all-reduce) and the
// answer says so. --verify adds measurements of the top candidates, and a measured best the
// measurement resolves overrides the model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/expected.hpp"
#include "model/job_contradictions.hpp"
#include "model/predictor.hpp"
#include "tuner/allocator_choice.hpp"
#include "tuner/search_space.hpp"

namespace dnntune::tuner {

enum class Objective { throughput, time_to_train, images_per_node };

// time-to-train's defaults (recommend's --epochs and --dataset-images): ImageNet-1k's usual
// 90 epochs of its training set.
inline constexpr double default_epochs = 90;
inline constexpr std::int64_t default_dataset_images = 1281167;

struct RecommendOptions {
  Objective objective = Objective::throughput;
  double epochs = default_epochs;                        // time_to_train
  std::int64_t dataset_images = default_dataset_images;  // time_to_train
  int runners_up = 4;
};

struct RankedPoint {
  model::Prediction prediction;
  double score = 0;  // larger is better
};

// A candidate trained for real (recommend --verify).
struct VerifiedPoint {
  model::Prediction prediction;
  double measured_images_per_second = 0;  // at the median step
  double measured_low = 0;                // at the slowest step
  double measured_high = 0;               // at the fastest
};

struct Recommendation {
  Objective objective = Objective::throughput;
  RankedPoint best;
  std::vector<RankedPoint> ranking;                 // every valid point, best score first (best included)
  std::optional<model::Prediction> single_process;  // 1 process x all cores, the winner's batch
  std::optional<model::Prediction> rule_of_thumb;   // 4 processes per node (or as many as cores)
  bool tied_within_band = false;                    // another candidate cannot be told apart from the top score
  int tied_candidates = 1;                          // the top score and those tied with it
  bool chosen_by_tie_break = false;                 // the pick is the simplest of the tied, not the top score
  // What the answer rests on, one line each (a spec answer: the reference, the parameters it
  // could not identify and their priors with sources, their share of the band); filled by the
  // caller that chose the model, printed by the reports.
  std::vector<std::string> basis;
  std::string how_to_settle;   // a tie-break pick: what would settle it
  std::string choice_note;     // why the winner, when it is not simply the top score
  std::size_t space_size = 0;  // points enumerated
  std::vector<ExcludedPoint> excluded;
  double seconds_to_train = 0;          // time_to_train: epochs x dataset / images/s
  std::vector<VerifiedPoint> verified;  // --verify: the candidates trained for real
  // The allocator of the best configuration (choose_allocator; set by the caller, which knows
  // what the node has installed). Its prediction is best's times the allocator's gain.
  std::optional<AllocatorChoice> allocator;
  // The user's recorded jobs of the pick's setup that ran outside its band (set by the caller that
  // read them: frontend/answers.cpp), each said with the answer.
  std::vector<model::JobContradiction> contradicting_jobs;
};

Expected<Recommendation> recommend(const model::Predictor& predictor, const workloads::Network& network,
                                   const SearchSpaceOptions& space_options, const RecommendOptions& options);

// The tie-break: every candidate the model cannot tell apart from the top score (bands that
// overlap and, with bootstrap replicates, paired replicate by replicate) competes, and the
// simplest of them is the pick (fewer processes, SMT off, all-reduce); the note says whether the
// pick is the model's or the tie-break's. A pick that no real step checked (confidence not
// "measured") gives way to the best-scored measured candidate whose band overlaps its own. A
// measured candidate within_run_spread of a measured pick counts as tied, but the pick stays the
// faster median (the better estimate there is: between two measured settings the simpler is not
// the faster more often than not; docs/results.md) and the note says how close the runs are.
// `result.ranking` must be sorted and banded;
// `replicates[i]` holds ranking[i]'s images/s per bootstrap replicate (empty: bands alone).
void choose_among_ties(Recommendation& result, const std::vector<std::vector<double>>& replicates);

// Whether the real runs behind two "measured" predictions cannot tell them apart: their figures
// differ by less than 90% of the spread of the difference of two run medians (each setting's
// run-to-run spread, Prediction::run_spread_log_sd, over the root of its runs). False unless both
// are measured. The paired replicates cannot see this (an anchor's correction is not among the
// model's parameters): two anchors can differ by less than one run of a setting moves, and the
// replicates would call the faster median certain. A first run
// trains such a pair again (pipeline/close_call_anchors.hpp); recommend names it in its note.
bool within_run_spread(const model::Prediction& a, const model::Prediction& b);

// The top score the tie-break passed over for the pick (choose_among_ties: a real step checked the
// pick, none checked the top score); null when the pick is the top score or the top score is
// measured. A first run times it by PyTorch beside the answer where that fits
// (pipeline/separating_anchors.hpp), and those runs can overturn the tie-break (recommend_allocator).
const RankedPoint* unchecked_top_score(const Recommendation& recommendation);

// The allocator of the answer (choose_allocator for the pick), and a close call decided by whole
// setups: when the pick and a measured candidate lie within their runs' spread (within_run_spread:
// glibc's defaults cannot tell them apart), each is taken under the allocator recommended for it,
// and where both allocators' gains rest on real steps at the candidate's own threads per process
// (model::AllocationModel::fitted_at) and one setup is faster by more than the two settings' runs
// move (as within_run_spread judges), the faster setup is the pick and the note says so. The
// layout a close call picks under glibc's defaults can lose under the allocator the answer sets
// (docs/results.md, "The first answer"). Where PyTorch from Python timed the decided setup and
// another side of the close call, each under its own allocator (AllocationModel::pytorch_setups),
// those runs decide: the fastest median is the pick, and the note says whether by more than
// their runs move. Every other setting of this node PyTorch timed is a side there too (the
// unchecked top score the tie-break passed over, a layout the C++ runs set apart from the pick):
// PyTorch's runs time what the job runs. `model`, `installed`,
// `user_choice`: as choose_allocator takes them (--allocator: both under it).
void recommend_allocator(Recommendation& recommendation, const std::optional<model::AllocationModel>& model,
                         const workloads::Network& network, const std::vector<InstalledAllocator>& installed,
                         const std::string& user_choice);

// The configurations --verify K trains: the recommended one first, then the best-ranked others.
std::vector<model::TrainingConfiguration> verification_candidates(const Recommendation& recommendation, std::size_t k);

// What --verify measured for `configuration`; null when it did not train it.
const VerifiedPoint* find_verified(const Recommendation& recommendation,
                                   const model::TrainingConfiguration& configuration);

// The empirical half of the tuner: records what --verify measured and makes the measured best
// the recommendation when the measurement resolves it from the model's pick (the step ranges
// do not overlap). When they overlap, the run cannot tell the two apart and the model's pick,
// the simpler or better-predicted one, stays; the choice note says which happened.
// `verified` must hold the recommended configuration.
void choose_by_measurement(Recommendation& recommendation, std::vector<VerifiedPoint> verified);

// Each objective with its name ("throughput", "time-to-train", "images-per-node"), as
// --objective takes them and reports print them: the one table of the names.
const std::vector<std::pair<std::string, Objective>>& objectives_by_name();

// The threads recommend() scores the candidates' bands on: this machine's logical CPUs, at most
// 16 (the estimate of a long search divides by the same).
unsigned scoring_workers();
std::string objective_name(Objective objective);

}  // namespace dnntune::tuner
