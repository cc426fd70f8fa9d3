// tuner/report.hpp — the views of a recommendation: a few lines for the user (text), the whole
// ranking (--explain), and JSON for scripts.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tuner/recommendation.hpp"

namespace dnntune::tuner {

std::string recommendation_text(const Recommendation& recommendation, bool explain);
nlohmann::json recommendation_json(const Recommendation& recommendation, bool explain);

}  // namespace dnntune::tuner
