// frontend/gpu_answers.cpp — see gpu_answers.hpp.
#include "frontend/gpu_answers.hpp"

#include <algorithm>

#include "common/json_file.hpp"
#include "data/builtin_machines.hpp"
#include "frontend/option_rows.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::frontend {
namespace {

Expected<void> apply_numerics(model::GpuConfiguration& configuration, const GpuSetupRequest& request) {
  if (request.precision) {
    auto precision = model::parse_gpu_precision(*request.precision);
    if (!precision) return precision.error();
    configuration.precision = *precision;
  }
  if (request.memory_format) {
    auto memory_format = model::parse_gpu_memory_format(*request.memory_format);
    if (!memory_format) return memory_format.error();
    configuration.memory_format = *memory_format;
  }
  return {};
}

// Each name of a list parsed by `parse`, none twice (a repeated name is a typo, never "more of it").
template <class Value, class Parse>
Expected<std::vector<Value>> parsed_names(const std::vector<std::string>& names, const std::string& option,
                                          Parse parse) {
  std::vector<Value> values;
  for (std::size_t index = 0; index < names.size(); ++index) {
    if (std::find(names.begin(), names.begin() + index, names[index]) != names.begin() + index)
      return bad_input(option + ": " + names[index] + " is listed twice");
    auto value = parse(names[index]);
    if (!value) return value.error();
    values.push_back(*value);
  }
  return values;
}

Expected<tuner::GpuSearchOptions> search_of(const GpuSource& gpu, const GpuRecommendRequest& request) {
  if (request.objective == tuner::Objective::time_to_train)
    return bad_input(long_name(option_rows::objective) +
                     " time-to-train is not modelled for GPU machines: use throughput or images-per-node");
  if (!request.allocator.empty()) return bad_input(gpu_allocator_refusal());
  tuner::GpuSearchOptions search = request.search;
  search.objective = request.objective == tuner::Objective::images_per_node ? tuner::GpuObjective::images_per_node
                                                                            : tuner::GpuObjective::throughput;
  auto precisions = parsed_names<model::GpuPrecision>(request.precisions, long_name(option_rows::precision),
                                                      model::parse_gpu_precision);
  if (!precisions) return precisions.error();
  for (const model::GpuPrecision precision : *precisions)
    if (auto has = model::check_gpu_precision(gpu.node, precision); !has) return has.error();
  search.precisions = *precisions;
  auto formats = parsed_names<model::GpuMemoryFormat>(request.memory_formats, long_name(option_rows::memory_format),
                                                      model::parse_gpu_memory_format);
  if (!formats) return formats.error();
  search.memory_formats = *formats;
  return search;
}

}  // namespace

std::string gpu_allocator_refusal() {
  return long_name(option_rows::allocator) +
         " is chosen for CPU nodes; a GPU machine's answers and job scripts leave the allocator as it is";
}

Expected<model::GpuEfficiencies> builtin_gpu_efficiencies() {
  return model::reference_gpu_efficiencies(data::builtin_reference_calibration("torch-cuda"));
}

Expected<std::optional<GpuSource>> gpu_source(const ModelSource& source) {
  if (source.machine.empty()) return std::optional<GpuSource>();
  // A machine that does not load is the CPU path's to report, in its order (the calibration first).
  const auto machine = data::load_machine(source.machine);
  if (!machine || machine->kind != records::MachineKind::gpu) return std::optional<GpuSource>();
  if (!source.topology_path.empty())
    return bad_input(long_name(option_rows::topology) + " describes a CPU node; " + machine->name + " is a GPU");
  auto node = model::gpu_node(*machine);
  if (!node) return node.error();
  auto efficiencies = builtin_gpu_efficiencies();
  if (!source.calibration_path.empty()) {
    auto calibration = model::read_gpu_calibration(source.calibration_path);
    if (!calibration) return calibration.error();
    efficiencies = calibration->efficiencies;
  }
  if (!efficiencies) return efficiencies.error();
  return std::optional<GpuSource>(GpuSource{std::move(*node), std::move(*efficiencies)});
}

Expected<model::GpuPrediction> answer_gpu_predict(const GpuSource& gpu, const GpuSetupRequest& request) {
  model::GpuConfiguration configuration = request.configuration;
  if (auto applied = apply_numerics(configuration, request); !applied) return applied.error();
  auto network = workloads::load_network(request.network);
  if (!network) return network.error();
  return model::predict_gpu(*network, gpu.node, gpu.efficiencies, configuration);
}

Expected<std::vector<model::GpuScalingRow>> answer_gpu_scale(const GpuSource& gpu, const GpuSetupRequest& request,
                                                             const std::vector<int>& node_counts) {
  model::GpuConfiguration configuration = request.configuration;
  configuration.nodes = 1;
  if (auto applied = apply_numerics(configuration, request); !applied) return applied.error();
  auto network = workloads::load_network(request.network);
  if (!network) return network.error();
  return model::predict_gpu_scaling(*network, gpu.node, gpu.efficiencies, configuration, node_counts);
}

Expected<GpuRecommendAnswer> answer_gpu_recommend(const GpuSource& gpu, const GpuRecommendRequest& request) {
  auto search = search_of(gpu, request);
  if (!search) return search.error();
  auto network = workloads::load_network(request.network);
  if (!network) return network.error();
  auto recommendation = tuner::recommend_gpu(*network, gpu.node, gpu.efficiencies, *search);
  if (!recommendation) return recommendation.error();
  const double seconds =
      request.epochs * static_cast<double>(request.dataset_images) / recommendation->best.images_per_second;
  return GpuRecommendAnswer{std::move(*recommendation), seconds};
}

nlohmann::json gpu_prediction_document(const model::GpuPrediction& prediction) {
  auto document = schema_head("dnntune.gpu-prediction", 1);
  document.update(model::gpu_prediction_json(prediction));
  return document;
}

nlohmann::json gpu_scaling_document(const std::vector<model::GpuScalingRow>& rows) {
  auto document = schema_head("dnntune.gpu-scaling", 1);
  document["rows"] = model::gpu_scaling_json(rows);
  return document;
}

nlohmann::json gpu_recommendation_document(const GpuRecommendAnswer& answer, bool explain) {
  return tuner::gpu_recommendation_json(answer.recommendation, explain);
}

}  // namespace dnntune::frontend
