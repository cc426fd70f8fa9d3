// frontend/request_defaults.cpp — see request_defaults.hpp.
#include "frontend/request_defaults.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "tuner/recommendation.hpp"

namespace dnntune::frontend {
namespace {

bool matches(const model::TrainingConfiguration& candidate, const model::TrainingConfiguration& asked,
             const GivenLayout& given) {
  return (!given.processes_per_node || candidate.processes_per_node == asked.processes_per_node) &&
         (!given.threads_per_process || candidate.threads_per_process == asked.threads_per_process) &&
         (!given.smt || candidate.smt);
}

}  // namespace

Expected<DefaultedConfiguration> with_default_layout(const model::Predictor& predictor,
                                                     const workloads::Network& network,
                                                     const model::TrainingConfiguration& asked, const GivenLayout& given,
                                                     const Recommender& recommended) {
  if (given.processes_per_node && given.threads_per_process) return DefaultedConfiguration{asked, "", std::nullopt};
  // What the user asked is checked as the prediction checks it (batch, fabric, what was given
  // fitting the node), with one of whatever was not given, before the search: its one-line reason.
  model::TrainingConfiguration least = asked;
  if (!given.processes_per_node) least.processes_per_node = 1;
  if (!given.threads_per_process) least.threads_per_process = 1;
  if (auto checked = predictor.predict(network, least, false); !checked) return checked.error();
  tuner::SearchSpaceOptions space;
  space.batches_per_process = {asked.batch_per_process};
  space.node_counts = {asked.nodes};
  space.fusion_megabytes = {asked.fusion_bytes / (1024 * 1024)};
  space.fabric = asked.fabric;
  if (given.processes_per_node) space.processes_per_node = {asked.processes_per_node};
  auto recommendation = recommended(space);
  if (!recommendation) return recommendation.error();
  // recommend's pick when it keeps what the user gave, else the best-ranked point that does.
  const model::TrainingConfiguration* chosen = nullptr;
  if (matches(recommendation->best.prediction.configuration, asked, given))
    chosen = &recommendation->best.prediction.configuration;
  for (const auto& point : recommendation->ranking)
    if (!chosen && matches(point.prediction.configuration, asked, given)) chosen = &point.prediction.configuration;
  if (!chosen)
    return bad_input("no layout of " + predictor.machine().name + " runs " + network.name + " with " +
                     (given.processes_per_node ? "--ppn " + std::to_string(asked.processes_per_node)
                                               : "--threads " + std::to_string(asked.threads_per_process)) +
                     ": give both --ppn and --threads");
  DefaultedConfiguration result{asked, "", std::nullopt};
  if (chosen == &recommendation->best.prediction.configuration) result.allocator = recommendation->allocator;
  result.configuration.processes_per_node = chosen->processes_per_node;
  result.configuration.threads_per_process = chosen->threads_per_process;
  result.configuration.smt = chosen->smt;
  model::TrainingConfiguration layout = result.configuration;
  layout.nodes = 1;
  result.layout_basis = "layout " + std::to_string(layout.processes_per_node) + " process(es) x " +
                        std::to_string(layout.threads_per_process) + " thread(s)" + (layout.smt ? " with SMT" : "") +
                        " per node: the one `dnntune recommend` picks for " + network.name + " at batch " +
                        std::to_string(asked.batch_per_process) + " on " + predictor.machine().name +
                        " (give --ppn and --threads for another)";
  return result;
}

void announce_search(const model::Predictor& predictor, const workloads::Network& network,
                     const tuner::SearchSpaceOptions& space, const pipeline::Progress& progress) {
  if (!progress) return;
  const auto enumerated = tuner::enumerate_search_space(predictor.rates(), space);
  const std::size_t count = enumerated.valid.size();
  if (count < candidates_worth_announcing) return;
  // One candidate scored with its band, as the ranking scores each of them, spread over the
  // cores as tuner::recommend spreads them.
  const auto started = std::chrono::steady_clock::now();
  (void)predictor.predict(network, enumerated.valid.front());
  const double each = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const double workers = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  const double seconds = each * static_cast<double>(count) / workers;
  char line[200];
  if (seconds >= 120)
    std::snprintf(line, sizeof line, "scoring %zu candidate configurations (about %.0f minutes) ...", count,
                  std::ceil(seconds / 60));
  else
    std::snprintf(line, sizeof line, "scoring %zu candidate configurations (about %.0f s) ...", count,
                  std::ceil(seconds));
  progress(line);
}

}  // namespace dnntune::frontend
