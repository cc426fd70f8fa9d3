// frontend/request_defaults.cpp — see request_defaults.hpp.
#include "frontend/request_defaults.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "frontend/option_rows.hpp"
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
                                                     const model::TrainingConfiguration& asked,
                                                     const GivenLayout& given, const Recommender& recommended) {
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
  const std::string ppn = long_name(option_rows::processes_per_node), threads = long_name(option_rows::threads);
  if (!chosen)
    return bad_input("no layout of " + predictor.machine().name + " runs " + network.name + " with " +
                     (given.processes_per_node ? ppn + " " + std::to_string(asked.processes_per_node)
                                               : threads + " " + std::to_string(asked.threads_per_process)) +
                     ": give both " + ppn + " and " + threads);
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

SearchEstimate estimate_search(const model::Predictor& predictor, const workloads::Network& network,
                               const tuner::SearchSpaceOptions& space) {
  const tuner::SearchSize size = tuner::count_search_space(predictor.rates(), space);
  SearchEstimate estimate{size.valid, 0};
  if (size.valid < candidates_worth_announcing || !size.first) return estimate;
  // One candidate scored with its band, as the ranking scores each of them, spread over the
  // cores as tuner::recommend spreads them.
  const auto started = std::chrono::steady_clock::now();
  (void)predictor.predict(network, *size.first);
  const double each = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const double workers = tuner::scoring_workers();
  estimate.seconds = each * static_cast<double>(size.valid) / workers;
  return estimate;
}

namespace {

// "about 97 minutes", "about 40 s".
std::string about(double seconds) {
  char text[64];
  if (seconds >= 120)
    std::snprintf(text, sizeof text, "about %.0f minutes", std::ceil(seconds / 60));
  else
    std::snprintf(text, sizeof text, "about %.0f s", std::ceil(seconds));
  return text;
}

}  // namespace

Expected<void> check_search_estimate(const SearchEstimate& estimate, double max_minutes,
                                     const std::string& limit_option) {
  if (!(estimate.seconds > max_minutes * 60)) return {};
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", max_minutes);
  return bad_input("the search would score " + std::to_string(estimate.candidates) + " candidate configurations, " +
                   about(estimate.seconds) + " on this machine, past the limit of " + limit +
                   " minutes: shorten the lists (node counts, batches, fusion sizes)" +
                   (limit_option.empty() ? std::string() : " or raise " + limit_option));
}

Expected<void> announce_search(const model::Predictor& predictor, const workloads::Network& network,
                               const tuner::SearchSpaceOptions& space, const pipeline::Progress& progress,
                               double max_minutes, const std::string& limit_option) {
  const SearchEstimate estimate = estimate_search(predictor, network, space);
  if (auto checked = check_search_estimate(estimate, max_minutes, limit_option); !checked) return checked;
  if (progress && estimate.seconds > 0)
    progress("scoring " + std::to_string(estimate.candidates) + " candidate configurations (" +
             about(estimate.seconds) + ") ...");
  return {};
}

}  // namespace dnntune::frontend
