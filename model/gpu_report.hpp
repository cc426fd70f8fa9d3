// model/gpu_report.hpp — the views of GPU predictions, as text and as JSON: one configuration
// with its term split, band, memory and the efficiencies' source; and a scaling table over nodes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/gpu_predictor.hpp"

namespace dnntune::model {

std::string gpu_prediction_text(const GpuPrediction& prediction);
nlohmann::json gpu_prediction_json(const GpuPrediction& prediction);
nlohmann::json gpu_configuration_json(const GpuConfiguration& configuration);

struct GpuScalingRow {
  int nodes = 1;
  GpuPrediction prediction;
  double speedup = 1;     // over one node
  double efficiency = 1;  // speedup / nodes
};

Expected<std::vector<GpuScalingRow>> predict_gpu_scaling(const workloads::Network& network, const GpuNode& node,
                                                         const GpuEfficiencies& efficiencies,
                                                         const GpuConfiguration& configuration,
                                                         const std::vector<int>& node_counts);
std::string gpu_scaling_text(const std::vector<GpuScalingRow>& rows);
nlohmann::json gpu_scaling_json(const std::vector<GpuScalingRow>& rows);

}  // namespace dnntune::model
