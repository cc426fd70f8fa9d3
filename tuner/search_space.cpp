// tuner/search_space.cpp — see search_space.hpp.
#include "tuner/search_space.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include "workloads/layer.hpp"

namespace dnntune::tuner {

namespace {

// Every point of the space in one fixed order: each valid configuration to `valid`, each that
// cannot run to `excluded` (the one walk both the search and its count take).
void walk_search_space(const model::MachineRates& rates, const SearchSpaceOptions& options,
                       const std::function<void(const model::TrainingConfiguration&)>& valid,
                       const std::function<void(ExcludedPoint&&)>& excluded) {
  const int cores = rates.cores();
  const int hardware_threads = cores * rates.pus_per_core;
  std::vector<bool> smt_settings = {false};
  if (options.consider_smt && rates.pus_per_core > 1) smt_settings.push_back(true);

  for (int nodes : options.node_counts)
    for (bool smt : smt_settings)
      for (int ppn = 1; ppn <= hardware_threads; ++ppn)
        for (int threads = 1; threads * ppn <= hardware_threads; ++threads) {
          if (!options.processes_per_node.empty() &&
              std::find(options.processes_per_node.begin(), options.processes_per_node.end(), ppn) ==
                  options.processes_per_node.end())
            continue;
          model::TrainingConfiguration base;
          base.nodes = nodes;
          base.smt = smt;
          base.processes_per_node = ppn;
          base.threads_per_process = threads;
          base.fabric = options.fabric;
          // SMT on only differs from SMT off when threads share cores: a process of 1 thread
          // on a core is the same placement either way, so it is counted once (SMT off).
          if (smt && threads == 1) continue;
          std::vector<std::int64_t> batches = options.batches_per_process;
          if (options.global_batch > 0) {
            const std::int64_t processes = static_cast<std::int64_t>(ppn) * nodes;
            const auto split = split_global_batch(options.global_batch, processes);
            if (!split) {
              base.batch_per_process = options.global_batch / processes;
              excluded({base, "the global batch " + std::to_string(options.global_batch) +
                                  " does not split evenly over " + std::to_string(processes) +
                                  " processes into batches of at most " + std::to_string(workloads::max_batch)});
              continue;
            }
            batches = {*split};
          }
          for (std::int64_t batch : batches) {
            base.batch_per_process = batch;
            auto placement = model::place(base, rates);
            if (!placement) {
              excluded({base, placement.error().message});
              continue;
            }
            for (double fusion : options.fusion_megabytes) {
              model::TrainingConfiguration configuration = base;
              configuration.fusion_bytes = fusion * 1024 * 1024;
              valid(configuration);
            }
            if (options.consider_parameter_server && ppn * nodes > 1)
              for (bool asynchronous : {false, true}) {
                model::TrainingConfiguration configuration = base;
                configuration.scheme = model::CommunicationScheme::parameter_server;
                configuration.parameter_servers = std::max(1, ppn * nodes / 8);
                configuration.asynchronous = asynchronous;
                valid(configuration);
              }
          }
        }
}

}  // namespace

SearchSpace enumerate_search_space(const model::MachineRates& rates, const SearchSpaceOptions& options) {
  SearchSpace space;
  walk_search_space(
      rates, options, [&](const model::TrainingConfiguration& point) { space.valid.push_back(point); },
      [&](ExcludedPoint&& point) { space.excluded.push_back(std::move(point)); });
  return space;
}

SearchSize count_search_space(const model::MachineRates& rates, const SearchSpaceOptions& options) {
  SearchSize size;
  walk_search_space(
      rates, options,
      [&](const model::TrainingConfiguration& point) {
        if (size.valid++ == 0) size.first = point;
      },
      [](ExcludedPoint&&) {});
  return size;
}

std::optional<std::int64_t> split_global_batch(std::int64_t global_batch, std::int64_t processes) {
  if (processes < 1 || global_batch % processes != 0 || global_batch / processes > workloads::max_batch)
    return std::nullopt;
  return global_batch / processes;
}

std::vector<std::int64_t> batches_to_score(const SearchSpaceOptions& options, int hardware_threads) {
  if (options.global_batch <= 0) return options.batches_per_process;
  std::set<std::int64_t, std::greater<>> batches;
  for (int nodes : options.node_counts)
    for (int ppn = 1; ppn <= hardware_threads; ++ppn) {
      if (const auto split = split_global_batch(options.global_batch, static_cast<std::int64_t>(ppn) * nodes))
        batches.insert(*split);
    }
  return {batches.begin(), batches.end()};
}

}  // namespace dnntune::tuner
