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

// "1502.6  (90% band 1014.0 - 2226.5, measured)"; where the band spans more than
// widest_band_ratio (model/plausibility.hpp) the figure is unknown, not a number:
// "unknown  (90% band 0.2 - 77674320.3, wider than 100x: the model does not know; measured)".
std::string images_per_second_text(double value, double low, double high, const std::string& confidence);
// The same for JSON: "images_per_second" (null where unknown) and "band" {low, high, level, known}.
void put_images_per_second(nlohmann::json& out, double value, double low, double high);
// A table's images/s cell: three significant figures, or "unknown" where the band is (scale's
// rows), and the line under such a table that says why.
std::string images_per_second_cell(double value, double low, double high);
std::string unknown_rows_note();

// "12.3 ms", "1.85 s"
std::string format_seconds(double seconds);

}  // namespace dnntune::model
