// tuner/search_space.hpp — every way to lay a training job out on a node: processes per node,
// threads per process, SMT on/off (and so cores per process and processes per socket), batch
// per process (or a global batch split over the processes), communication scheme and fusion
// threshold, and node counts. Points that cannot run are kept, with the reason, so nothing is
// excluded silently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/machine_rates.hpp"
#include "model/training_configuration.hpp"

namespace dnntune::tuner {

struct SearchSpaceOptions {
  std::vector<std::int64_t> batches_per_process = {32};
  std::int64_t global_batch = 0;  // > 0: split over processes x nodes instead of batches_per_process
  std::vector<int> node_counts = {1};
  bool consider_smt = true;
  bool consider_parameter_server = false;
  std::vector<double> fusion_megabytes = {model::default_fusion_megabytes};
  std::string fabric = model::default_fabric;
  std::vector<int> processes_per_node;  // only these (a launcher or a site rule fixed them); empty: all
};

struct ExcludedPoint {
  model::TrainingConfiguration configuration;
  std::string reason;
};

struct SearchSpace {
  std::vector<model::TrainingConfiguration> valid;
  std::vector<ExcludedPoint> excluded;
};

// Processes per node run from 1 to the node's hardware threads and threads per process from 1
// to what is left; with SMT off a point that needs more cores than the node has is excluded,
// with SMT on one that needs more hardware threads.
SearchSpace enumerate_search_space(const model::MachineRates& rates, const SearchSpaceOptions& options);

// How many valid points enumerate_search_space would give, without holding them (a search of
// millions is counted before it is refused), and the first of them.
struct SearchSize {
  std::size_t valid = 0;
  std::optional<model::TrainingConfiguration> first;
};
SearchSize count_search_space(const model::MachineRates& rates, const SearchSpaceOptions& options);

// The batch per process when `global_batch` is split evenly over `processes`; none when it
// does not split evenly or a share exceeds workloads::max_batch.
std::optional<std::int64_t> split_global_batch(std::int64_t global_batch, std::int64_t processes);

// The batches per process the search can score on a node of `hardware_threads`: --batch's
// list, or every even split of the global batch over 1..hardware_threads ranks per node on each
// node count, largest first (what a default calibration of this machine has to measure).
std::vector<std::int64_t> batches_to_score(const SearchSpaceOptions& options, int hardware_threads);

}  // namespace dnntune::tuner
