// tuner/recommendation.cpp — see recommendation.hpp.
#include "tuner/recommendation.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "common/text_format.hpp"

namespace dnntune::tuner {
namespace {

double score_of(const model::Prediction& prediction, Objective objective) {
  if (objective == Objective::images_per_node) return prediction.images_per_second / prediction.configuration.nodes;
  return prediction.images_per_second;  // throughput; time to train falls as images/s rises
}

// How much there is to get wrong in a job set-up: fewer processes, SMT off, all-reduce.
int complexity(const model::TrainingConfiguration& configuration) {
  return 4 * (configuration.processes_per_node - 1) + (configuration.smt ? 2 : 0) +
         (configuration.scheme == model::CommunicationScheme::parameter_server ? 8 : 0) +
         (configuration.asynchronous ? 4 : 0);
}

bool bands_overlap(const model::Prediction& a, const model::Prediction& b) {
  return a.images_per_second_low <= b.images_per_second_high && b.images_per_second_low <= a.images_per_second_high;
}

}  // namespace

const std::vector<std::pair<std::string, Objective>>& objectives_by_name() {
  static const std::vector<std::pair<std::string, Objective>> table{
      {"throughput", Objective::throughput},
      {"time-to-train", Objective::time_to_train},
      {"images-per-node", Objective::images_per_node}};
  return table;
}

std::string objective_name(Objective objective) {
  for (const auto& [name, value] : objectives_by_name())
    if (value == objective) return name;
  return "?";
}

Expected<Recommendation> recommend(const model::Predictor& predictor, const workloads::Network& network,
                                   const SearchSpaceOptions& space_options, const RecommendOptions& options) {
  const SearchSpace space = enumerate_search_space(predictor.rates(), space_options);
  Recommendation result;
  result.objective = options.objective;
  result.space_size = space.valid.size() + space.excluded.size();
  result.excluded = space.excluded;
  if (space.valid.empty()) {
    std::string reason = space.excluded.empty() ? "the search space is empty" : space.excluded.front().reason;
    return bad_input("no configuration fits this node: " + reason);
  }
  // Rank without bands (fast), then band the top few: only they are compared with each other.
  for (const auto& configuration : space.valid) {
    auto prediction = predictor.predict(network, configuration, false);
    if (!prediction) return prediction.error();
    result.ranking.push_back({*prediction, score_of(*prediction, options.objective)});
  }
  std::stable_sort(result.ranking.begin(), result.ranking.end(),
                   [](const RankedPoint& a, const RankedPoint& b) { return a.score > b.score; });
  const std::size_t banded = std::min<std::size_t>(result.ranking.size(), options.runners_up + 1);
  for (std::size_t index = 0; index < banded; ++index) {
    auto prediction = predictor.predict(network, result.ranking[index].prediction.configuration, true);
    if (!prediction) return prediction.error();
    result.ranking[index].prediction = *prediction;
  }

  result.best = result.ranking.front();
  for (std::size_t index = 1; index < banded; ++index) {
    const RankedPoint& candidate = result.ranking[index];
    if (!bands_overlap(candidate.prediction, result.ranking.front().prediction)) continue;
    result.tied_within_band = true;
    if (complexity(candidate.prediction.configuration) < complexity(result.best.prediction.configuration))
      result.best = candidate;
  }
  if (result.tied_within_band)
    result.choice_note = result.best.score == result.ranking.front().score
                             ? "the runners-up are within the winner's uncertainty band: measure them with --verify"
                             : "the top candidates are within each other's uncertainty band; the simplest of them "
                               "is recommended (fewer processes, SMT off)";

  const model::TrainingConfiguration& best = result.best.prediction.configuration;
  const model::MachineRates& rates = predictor.rates();
  model::TrainingConfiguration single = best;
  single.processes_per_node = 1;
  single.threads_per_process = rates.cores();
  single.smt = false;
  single.scheme = model::CommunicationScheme::allreduce;
  // A baseline trains the same global batch when one is fixed (and is left out when it does
  // not split evenly), else the winner's batch per process.
  const auto with_its_batch = [&](model::TrainingConfiguration baseline) -> std::optional<model::TrainingConfiguration> {
    if (space_options.global_batch <= 0) return baseline;
    const auto split = split_global_batch(space_options.global_batch,
                                          static_cast<std::int64_t>(baseline.processes_per_node) * baseline.nodes);
    if (!split) return std::nullopt;
    baseline.batch_per_process = *split;
    return baseline;
  };
  if (const auto baseline = with_its_batch(single))
    if (auto prediction = predictor.predict(network, *baseline, false)) result.single_process = *prediction;
  model::TrainingConfiguration thumb = single;
  thumb.processes_per_node = std::min(4, rates.cores());
  thumb.threads_per_process = rates.cores() / thumb.processes_per_node;
  if (const auto baseline = with_its_batch(thumb))
    if (auto prediction = predictor.predict(network, *baseline, false)) result.rule_of_thumb = *prediction;
  result.seconds_to_train =
      options.epochs * static_cast<double>(options.dataset_images) / result.best.prediction.images_per_second;
  return result;
}

std::vector<model::TrainingConfiguration> verification_candidates(const Recommendation& recommendation, std::size_t k) {
  std::vector<model::TrainingConfiguration> candidates;
  if (k == 0) return candidates;
  const model::TrainingConfiguration& chosen = recommendation.best.prediction.configuration;
  candidates.push_back(chosen);
  for (const RankedPoint& point : recommendation.ranking) {
    if (candidates.size() >= k) break;
    if (point.prediction.configuration != chosen) candidates.push_back(point.prediction.configuration);
  }
  return candidates;
}

const VerifiedPoint* find_verified(const Recommendation& recommendation,
                                   const model::TrainingConfiguration& configuration) {
  for (const VerifiedPoint& point : recommendation.verified)
    if (point.prediction.configuration == configuration) return &point;
  return nullptr;
}

void choose_by_measurement(Recommendation& recommendation, std::vector<VerifiedPoint> verified) {
  recommendation.verified = std::move(verified);
  const auto& points = recommendation.verified;
  const VerifiedPoint* pick = find_verified(recommendation, recommendation.best.prediction.configuration);
  if (!pick) throw std::logic_error("choose_by_measurement: the recommended configuration was not verified");
  const auto fastest = std::max_element(points.begin(), points.end(), [](const VerifiedPoint& a, const VerifiedPoint& b) {
    return a.measured_images_per_second < b.measured_images_per_second;
  });
  const std::string pick_text = format_fixed(pick->measured_images_per_second, 2) + " images/s";
  const std::string fastest_text = model::describe(fastest->prediction.configuration) + " measured " +
                                   format_fixed(fastest->measured_images_per_second, 2) + " images/s";
  if (&*fastest == pick) {
    recommendation.choice_note = "verified: the model's pick measured fastest (" + pick_text + ")";
  } else if (fastest->measured_low > pick->measured_high) {
    recommendation.choice_note = "verified: " + fastest_text + ", clearly above the model's pick (" + pick_text +
                                 ", step ranges apart); the measured best is recommended";
    for (const RankedPoint& point : recommendation.ranking)
      if (point.prediction.configuration == fastest->prediction.configuration) recommendation.best = point;
  } else {
    recommendation.choice_note = "verified: " + fastest_text + " against " + pick_text +
                                 " for the model's pick, within the steps' spread: a tie at this run's precision, so "
                                 "the model's pick stays";
  }
}

}  // namespace dnntune::tuner
