// model/scaling.hpp — how training scales over nodes: predictions over a range of node counts,
// as a table (text, JSON) and as an SVG plot of images/s with its band against ideal scaling.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "model/predictor.hpp"

namespace dnntune::model {

struct ScalingRow {
  int nodes = 1;
  Prediction prediction;
  double speedup = 1;     // over one node
  double efficiency = 1;  // speedup / nodes
};

// "1..1024" (powers of two from the first to the last, the last included), "1,2,4,8" or "16",
// sorted without repeats: the list grammar and limit of common/number_grammar.hpp
// (lists::node_counts); `option` names it in messages.
Expected<std::vector<int>> parse_node_counts(const std::string& text, const std::string& option = "--nodes");

Expected<std::vector<ScalingRow>> predict_scaling(const Predictor& predictor, const workloads::Network& network,
                                                  const TrainingConfiguration& configuration,
                                                  const std::vector<int>& node_counts);

std::string scaling_text(const std::vector<ScalingRow>& rows);
nlohmann::json scaling_json(const std::vector<ScalingRow>& rows);
std::string scaling_svg(const std::vector<ScalingRow>& rows, const std::string& title);

}  // namespace dnntune::model
