// model/validation.hpp — how well the model predicts real training: measured against predicted
// images/s per configuration, the mean absolute percentage error per network and overall, and
// whether the predicted ranking of configurations is the measured one (and what choosing by the
// model costs against the measured best). The views are text and JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/predictor.hpp"

namespace dnntune::model {

struct ValidationRow {
  std::string network;
  TrainingConfiguration configuration;
  double measured_images_per_second = 0;
  double measured_low = 0;   // images/s at the slowest measured step
  double measured_high = 0;  // at the fastest
  Prediction prediction;

  double error_percent() const {
    return 100 * (prediction.images_per_second - measured_images_per_second) / measured_images_per_second;
  }
};

// One network at one batch: its configurations ranked both ways.
struct RankingCheck {
  std::string network;
  std::int64_t batch = 0;
  bool same_order = false;  // predicted order of images/s == measured order
  // Every pair the model orders otherwise than the measurement has overlapping measured step
  // ranges (slowest to fastest step): the measurement itself cannot tell those two apart, and
  // another run may order them either way. False when the order is the same.
  bool differs_only_within_spread = false;
  std::string predicted_best;  // "2x1"
  std::string measured_best;
  double regret_percent = 0;  // measured best over the measured images/s of the predicted best, - 1
};

struct ValidationSummary {
  std::vector<std::pair<std::string, double>> mape_by_network;  // percent
  double mape_overall = 0;
  std::vector<RankingCheck> rankings;
};

ValidationSummary summarise_validation(const std::vector<ValidationRow>& rows);
std::string validation_text(const std::vector<ValidationRow>& rows, const ValidationSummary& summary);
nlohmann::json validation_json(const std::vector<ValidationRow>& rows, const ValidationSummary& summary);

}  // namespace dnntune::model
