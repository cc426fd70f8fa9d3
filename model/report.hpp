// model/report.hpp — the views of the model's answers, each as text and as JSON (llvm-mca
// style): a prediction with its term split and band, and the fit report of a calibration.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "model/calibration.hpp"
#include "model/predictor.hpp"

namespace dnntune::model {

std::string prediction_text(const Prediction& prediction);
nlohmann::json prediction_json(const Prediction& prediction);

std::string fit_report_text(const Calibration& calibration);
nlohmann::json fit_report_json(const Calibration& calibration);

// Every figure a command answers with (images/s, its band, an iteration's seconds) is finite and
// above 0, or there is no answer: a failure (exit 1, the model's fault) naming `what` and the
// first figure that is not. One check for the CPU and GPU predictors, whose answers every view,
// the command and the Python module show.
Expected<void> check_answer_figures(const std::string& what,
                                    std::initializer_list<std::pair<const char*, double>> figures);

// "12.3 ms", "1.85 s"
std::string format_seconds(double seconds);

}  // namespace dnntune::model
