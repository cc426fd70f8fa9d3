// tuner/gpu_recommendation.hpp — the search on GPU nodes: GPUs used per node, batch per GPU,
// DDP fusion (bucket) size and nodes, every point scored by the GPU model; a batch a GPU cannot
// hold is excluded with its reason. Ranked by the objective; the same views as text and JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "model/gpu_predictor.hpp"

namespace dnntune::tuner {

enum class GpuObjective { throughput, images_per_node };

struct GpuSearchOptions {
  std::vector<int> gpus_per_node;  // empty: 1, 2, 4, ... and all of the node's
  std::vector<std::int64_t> batches_per_gpu = {32, 64, 128};
  std::vector<double> fusion_megabytes = {model::default_fusion_megabytes};
  std::vector<int> node_counts = {1};
  std::string fabric = model::default_fabric;
  GpuObjective objective = GpuObjective::throughput;
  std::vector<model::GpuPrecision> precisions;         // empty: every precision the GPU has
  std::vector<model::GpuMemoryFormat> memory_formats;  // empty: contiguous and channels_last
};

struct GpuExcludedPoint {
  model::GpuConfiguration configuration;
  std::string reason;
};

struct GpuRecommendation {
  GpuObjective objective = GpuObjective::throughput;
  model::GpuPrediction best;  // with its band and scaling efficiency
  // The best in strict precision (fp32, or TF32 where PyTorch uses it by default) and the best
  // in mixed precision (bf16/fp16 autocast), side by side: what autocast is worth, if searched.
  std::optional<model::GpuPrediction> best_strict;
  std::optional<model::GpuPrediction> best_mixed;
  std::vector<model::GpuPrediction> ranking;  // every valid point, best first
  std::vector<GpuExcludedPoint> excluded;
  std::size_t space_size = 0;
};

// The GPU counts searched by default on a node of `gpus_per_node`: powers of two and the node.
std::vector<int> default_gpu_counts(int gpus_per_node);

// Fails when no point is valid (the message gives the first exclusion's reason).
Expected<GpuRecommendation> recommend_gpu(const workloads::Network& network, const model::GpuNode& node,
                                          const model::GpuEfficiencies& efficiencies, const GpuSearchOptions& options);

std::string gpu_recommendation_text(const GpuRecommendation& recommendation, bool explain);
// With its "schema" head (dnntune.gpu-recommendation).
nlohmann::json gpu_recommendation_json(const GpuRecommendation& recommendation, bool explain);

}  // namespace dnntune::tuner
