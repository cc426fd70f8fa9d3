// model/validation.cpp — see validation.hpp.
#include "model/validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "model/report.hpp"

namespace dnntune::model {
namespace {

std::string layout(const TrainingConfiguration& c) {
  return std::to_string(c.processes_per_node) + "x" + std::to_string(c.threads_per_process) + (c.smt ? " SMT" : "");
}

}  // namespace

ValidationSummary summarise_validation(const std::vector<ValidationRow>& rows) {
  ValidationSummary summary;
  std::map<std::string, std::vector<double>> errors;
  std::map<std::pair<std::string, std::int64_t>, std::vector<const ValidationRow*>> groups;
  double total = 0;
  for (const ValidationRow& row : rows) {
    errors[row.network].push_back(std::abs(row.error_percent()));
    total += std::abs(row.error_percent());
    groups[{row.network, row.configuration.batch_per_process}].push_back(&row);
  }
  for (const auto& [network, values] : errors) {
    double sum = 0;
    for (double value : values) sum += value;
    summary.mape_by_network.emplace_back(network, sum / values.size());
  }
  summary.mape_overall = rows.empty() ? 0 : total / rows.size();
  for (auto& [key, group] : groups) {
    RankingCheck check;
    check.network = key.first;
    check.batch = key.second;
    auto by_measured = group, by_predicted = group;
    std::stable_sort(by_measured.begin(), by_measured.end(), [](const auto* a, const auto* b) {
      return a->measured_images_per_second > b->measured_images_per_second;
    });
    std::stable_sort(by_predicted.begin(), by_predicted.end(), [](const auto* a, const auto* b) {
      return a->prediction.images_per_second > b->prediction.images_per_second;
    });
    check.same_order = by_measured == by_predicted;
    if (!check.same_order) {
      check.differs_only_within_spread = true;
      for (const ValidationRow* a : group)
        for (const ValidationRow* b : group) {
          const bool measured_faster = a->measured_images_per_second > b->measured_images_per_second;
          const bool predicted_faster = a->prediction.images_per_second > b->prediction.images_per_second;
          const bool ranges_overlap = a->measured_low <= b->measured_high && b->measured_low <= a->measured_high;
          if (measured_faster && !predicted_faster && !ranges_overlap) check.differs_only_within_spread = false;
        }
    }
    check.measured_best = layout(by_measured.front()->configuration);
    check.predicted_best = layout(by_predicted.front()->configuration);
    check.regret_percent =
        100 * (by_measured.front()->measured_images_per_second / by_predicted.front()->measured_images_per_second - 1);
    summary.rankings.push_back(check);
  }
  return summary;
}

std::string validation_text(const std::vector<ValidationRow>& rows, const ValidationSummary& summary) {
  std::ostringstream out;
  char line[220];
  std::snprintf(line, sizeof line, "%-14s %6s %-9s %21s %21s %8s  %s\n", "network", "batch", "ppn x t",
                "measured images/s", "predicted (90% band)", "error", "confidence");
  out << line;
  for (const ValidationRow& row : rows) {
    const Prediction& p = row.prediction;
    char measured[64], predicted[64];
    std::snprintf(measured, sizeof measured, "%.2f [%.2f-%.2f]", row.measured_images_per_second, row.measured_low,
                  row.measured_high);
    std::snprintf(predicted, sizeof predicted, "%.2f [%.2f-%.2f]", p.images_per_second, p.images_per_second_low,
                  p.images_per_second_high);
    std::snprintf(line, sizeof line, "%-14s %6lld %-9s %21s %21s %+7.1f%%  %s\n", row.network.c_str(),
                  static_cast<long long>(row.configuration.batch_per_process), layout(row.configuration).c_str(),
                  measured, predicted, row.error_percent(), p.confidence.c_str());
    out << line;
  }
  out << "\nMean absolute percentage error:";
  for (const auto& [network, mape] : summary.mape_by_network) {
    std::snprintf(line, sizeof line, " %s %.1f%%,", network.c_str(), mape);
    out << line;
  }
  std::snprintf(line, sizeof line, " overall %.1f%% over %zu runs\n", summary.mape_overall, rows.size());
  out << line << "Ranking of configurations (predicted vs measured):\n";
  for (const RankingCheck& check : summary.rankings) {
    std::snprintf(
        line, sizeof line,
        "  %-14s batch %-4lld %-13s predicted best %-7s measured best %-7s (choosing by the model loses %.1f%%)\n",
        check.network.c_str(), static_cast<long long>(check.batch),
        check.same_order ? "same order," : "DIFFERENT order,", check.predicted_best.c_str(),
        check.measured_best.c_str(), check.regret_percent);
    out << line;
    if (check.differs_only_within_spread)
      out << "    (it differs only for configurations whose measured step ranges overlap: a tie at this "
             "measurement's precision; more --iters may resolve it)\n";
  }
  return out.str();
}

nlohmann::json validation_json(const std::vector<ValidationRow>& rows, const ValidationSummary& summary) {
  nlohmann::json runs = nlohmann::json::array();
  for (const ValidationRow& row : rows)
    runs.push_back({{"network", row.network},
                    {"measured_images_per_second", row.measured_images_per_second},
                    {"measured_range", {row.measured_low, row.measured_high}},
                    {"error_percent", row.error_percent()},
                    {"prediction", prediction_json(row.prediction)}});
  nlohmann::json mape = nlohmann::json::object();
  for (const auto& [network, value] : summary.mape_by_network) mape[network] = value;
  nlohmann::json rankings = nlohmann::json::array();
  for (const RankingCheck& check : summary.rankings)
    rankings.push_back({{"network", check.network},
                        {"batch", check.batch},
                        {"same_order", check.same_order},
                        {"differs_only_within_spread", check.differs_only_within_spread},
                        {"predicted_best", check.predicted_best},
                        {"measured_best", check.measured_best},
                        {"regret_percent", check.regret_percent}});
  return {{"schema", "dnntune.validation"},
          {"schema_version", 1},
          {"runs", runs},
          {"mape_percent_by_network", mape},
          {"mape_percent_overall", summary.mape_overall},
          {"rankings", rankings}};
}

}  // namespace dnntune::model
