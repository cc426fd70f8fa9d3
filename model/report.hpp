// model/report.hpp — the views of the model's answers, each as text and as JSON (llvm-mca
// style): a prediction with its term split and band, and the fit report of a calibration.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "model/calibration.hpp"
#include "model/predictor.hpp"

namespace dnntune::model {

std::string prediction_text(const Prediction& prediction);
nlohmann::json prediction_json(const Prediction& prediction);

std::string fit_report_text(const Calibration& calibration);
nlohmann::json fit_report_json(const Calibration& calibration);

// "12.3 ms", "1.85 s"
std::string format_seconds(double seconds);

}  // namespace dnntune::model
