// frontend/gpu_answers.hpp — predict, scale and recommend on a GPU node (a built-in GPU profile,
// data::builtin_gpu_machine_names(), or a GPU profile JSON), answered by the GPU model
// (model/gpu_predictor.hpp) and the GPU tuner: the one place the command (cli/gpu_commands.cpp)
// and the Python module's GPU model build those answers. Requests hold parsed numbers (each
// front end parses them by common/number_grammar.hpp); the precision and memory format names are
// checked here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "frontend/model_source.hpp"
#include "model/gpu_calibration.hpp"
#include "model/gpu_predictor.hpp"
#include "model/gpu_report.hpp"
#include "tuner/gpu_recommendation.hpp"
#include "tuner/recommendation.hpp"

namespace dnntune::frontend {

// Why --allocator (allocator=) is refused on a GPU machine.
std::string gpu_allocator_refusal();

struct GpuSource {
  model::GpuNode node;
  model::GpuEfficiencies efficiencies;
};

// The efficiencies GPU predictions use: the built-in GPU reference calibration
// (data/reference_calibrations/torch-cuda.json).
Expected<model::GpuEfficiencies> builtin_gpu_efficiencies();

// The GPU node `source.machine` names with its efficiencies (`source.calibration_path`: a GPU
// calibration made by `dnntune fit --backend torch-cuda`); nothing for a CPU machine, none, or one
// that does not load (the CPU path reports that, in its order). Fails on a GPU calibration that
// does not load and on a topology with a GPU.
Expected<std::optional<GpuSource>> gpu_source(const ModelSource& source);

// One GPU configuration; precision and memory format: nullopt for the GPU's PyTorch default and
// contiguous, else a name ("" is refused).
struct GpuSetupRequest {
  std::string network;
  model::GpuConfiguration configuration;  // numbers as asked; numerics from the names below
  std::optional<std::string> precision;
  std::optional<std::string> memory_format;
};

Expected<model::GpuPrediction> answer_gpu_predict(const GpuSource& gpu, const GpuSetupRequest& request);
// The configuration's node count is ignored: the curve is over `node_counts`.
Expected<std::vector<model::GpuScalingRow>> answer_gpu_scale(const GpuSource& gpu, const GpuSetupRequest& request,
                                                             const std::vector<int>& node_counts);

struct GpuRecommendRequest {
  std::string network;
  // GPUs per node, batches (default 32, 64, 128), fusion sizes, node counts and fabric; its
  // precisions and memory formats come from the names below.
  tuner::GpuSearchOptions search;
  std::vector<std::string> precisions;      // empty: every one the GPU has; each a name, none twice
  std::vector<std::string> memory_formats;  // empty: contiguous and channels_last
  // Time-to-train is not modelled on GPUs.
  tuner::Objective objective = tuner::Objective::throughput;
  // Refused unless "": a GPU job script leaves the allocator alone.
  std::string allocator;
  double epochs = tuner::RecommendOptions{}.epochs;
  std::int64_t dataset_images = tuner::RecommendOptions{}.dataset_images;
};

struct GpuRecommendAnswer {
  tuner::GpuRecommendation recommendation;
  double seconds_to_train = 0;  // the job script's default --time: epochs of the dataset at the pick's images/s
};

Expected<GpuRecommendAnswer> answer_gpu_recommend(const GpuSource& gpu, const GpuRecommendRequest& request);

// The JSON documents: schemas/gpu-prediction.schema.json, gpu-scaling.schema.json,
// gpu-recommendation.schema.json.
nlohmann::json gpu_prediction_document(const model::GpuPrediction& prediction);
nlohmann::json gpu_scaling_document(const std::vector<model::GpuScalingRow>& rows);
nlohmann::json gpu_recommendation_document(const GpuRecommendAnswer& answer, bool explain);

}  // namespace dnntune::frontend
