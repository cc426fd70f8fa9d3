// model/gpu_report.cpp — see gpu_report.hpp.
#include "model/gpu_report.hpp"

#include <sstream>

#include "common/text_format.hpp"
#include "model/plausibility.hpp"
#include "model/report.hpp"

namespace dnntune::model {
namespace {

GpuPrecision precision_of(const GpuConfiguration& c) { return c.precision.value_or(GpuPrecision::fp32); }

// "tf32", "bf16 channels_last": the numerics a prediction used, for headers.
std::string numerics_text(const GpuConfiguration& c) {
  std::string text = gpu_precision_name(precision_of(c));
  if (c.memory_format == GpuMemoryFormat::channels_last) text += " channels_last";
  return text;
}

}  // namespace

std::string gpu_prediction_text(const GpuPrediction& p) {
  std::ostringstream out;
  const GpuIterationTerms& t = p.terms;
  GpuConfiguration shown = p.configuration;
  shown.precision.reset();  // the header names the numerics
  out << p.network << " on " << p.machine << " (GPU, " << numerics_text(p.configuration) << "): " << describe(shown)
      << "\n";
  out << "  images/s      "
      << images_per_second_text(p.images_per_second, p.images_per_second_low, p.images_per_second_high, p.confidence)
      << "\n";
  out << "  iteration     " << format_seconds(p.iteration_seconds) << "\n";
  const std::pair<const char*, double> rows[] = {{"forward", t.forward},
                                                 {"backward", t.backward},
                                                 {"gradient sums", t.gradient_sums},
                                                 {"optimizer", t.optimizer},
                                                 {"exposed comm", t.exposed_communication}};
  for (const auto& [name, seconds] : rows)
    if (seconds > 0)
      out << "    " << name << std::string(18 - std::string(name).size(), ' ') << format_seconds(seconds) << "  ("
          << format_percent(seconds, p.iteration_seconds) << ")\n";
  if (t.communication > 0)
    out << "  all-reduce    " << format_seconds(t.communication) << " in " << p.buckets << " buckets ("
        << p.allreduce_algorithm << "), " << format_seconds(t.exposed_communication) << " not hidden\n";
  const double layers = t.compute_bound + t.memory_bound + t.overhead_bound;
  out << "  layer time    compute-bound " << format_percent(t.compute_bound, layers) << ", memory-bound "
      << format_percent(t.memory_bound, layers) << ", overhead-bound " << format_percent(t.overhead_bound, layers)
      << "\n";
  out << "  memory        " << format_fixed(p.memory_bytes_needed / 1e9, 1) << " GB of "
      << format_fixed(p.memory_bytes_available / 1e9, 1) << " GB per GPU\n";
  if (p.configuration.gpus_per_node * p.configuration.nodes > 1)
    out << "  scaling       " << format_fixed(100 * p.scaling_efficiency, 1) << "% of "
        << p.configuration.gpus_per_node * p.configuration.nodes << " single GPUs\n";
  out << "  bottleneck    " << p.bottleneck << "\n";
  out << "  efficiencies  " << p.efficiencies_source << "\n";
  if (!p.confidence_reason.empty()) out << "  rests on      " << p.confidence_reason << "\n";
  for (const std::string& setting :
       gpu_script_settings(precision_of(p.configuration), p.configuration.memory_format, p.gpu_has_tf32))
    out << "  script sets   " << setting << "\n";
  for (const std::string& assumption : p.assumptions) out << "  assumed       " << assumption << "\n";
  return out.str();
}

nlohmann::json gpu_configuration_json(const GpuConfiguration& c) {
  return {{"gpus_per_node", c.gpus_per_node},
          {"batch_per_gpu", c.batch_per_gpu},
          {"nodes", c.nodes},
          {"fusion_bytes", c.fusion_bytes},
          {"fabric", c.fabric},
          {"precision", gpu_precision_name(precision_of(c))},
          {"memory_format", gpu_memory_format_name(c.memory_format)}};
}

nlohmann::json gpu_prediction_json(const GpuPrediction& p) {
  const GpuIterationTerms& t = p.terms;
  nlohmann::json out = {{"network", p.network},
                        {"machine", p.machine},
                        {"configuration", gpu_configuration_json(p.configuration)},
                        {"iteration_seconds", p.iteration_seconds},
                        {"measured_fraction", p.measured_fraction},
                        {"scaling_efficiency", p.scaling_efficiency},
                        {"terms_seconds",
                         {{"forward", t.forward},
                          {"backward", t.backward},
                          {"gradient_sums", t.gradient_sums},
                          {"optimizer", t.optimizer},
                          {"communication", t.communication},
                          {"exposed_communication", t.exposed_communication}}},
                        {"layer_time_by_bound_seconds",
                         {{"compute", t.compute_bound}, {"memory", t.memory_bound}, {"overhead", t.overhead_bound}}},
                        {"allreduce", {{"algorithm", p.allreduce_algorithm}, {"buckets", p.buckets}}},
                        {"memory_bytes", {{"needed", p.memory_bytes_needed}, {"available", p.memory_bytes_available}}},
                        {"confidence", p.confidence},
                        {"confidence_reason", p.confidence_reason},
                        {"script_settings", gpu_script_settings(precision_of(p.configuration),
                                                                p.configuration.memory_format, p.gpu_has_tf32)},
                        {"efficiencies", p.efficiencies_source},
                        {"assumptions", p.assumptions},
                        {"bottleneck", p.bottleneck}};
  put_images_per_second(out, p.images_per_second, p.images_per_second_low, p.images_per_second_high);
  return out;
}

Expected<std::vector<GpuScalingRow>> predict_gpu_scaling(const workloads::Network& network, const GpuNode& node,
                                                         const GpuEfficiencies& efficiencies,
                                                         const GpuConfiguration& configuration,
                                                         const std::vector<int>& node_counts) {
  GpuConfiguration one_node = configuration;
  one_node.nodes = 1;
  auto base = predict_gpu(network, node, efficiencies, one_node, false);
  if (!base) return base.error();
  std::vector<GpuScalingRow> rows;
  for (int nodes : node_counts) {
    GpuConfiguration at = configuration;
    at.nodes = nodes;
    auto prediction = predict_gpu(network, node, efficiencies, at);
    if (!prediction) return prediction.error();
    const double speedup = prediction->images_per_second / base->images_per_second;
    rows.push_back({nodes, std::move(*prediction), speedup, speedup / nodes});
  }
  return rows;
}

std::string gpu_scaling_text(const std::vector<GpuScalingRow>& rows) {
  std::ostringstream out;
  if (rows.empty()) return "";
  const GpuPrediction& first = rows.front().prediction;
  GpuConfiguration per_node = first.configuration;
  per_node.nodes = 1;
  per_node.precision.reset();
  out << first.network << " on " << first.machine << " nodes (GPU, " << numerics_text(first.configuration)
      << "): " << describe(per_node) << " per node, " << first.configuration.fabric << "\n";
  out << "  nodes   images/s (90% band)            speed-up  efficiency  exposed comm\n";
  bool any_unknown = false;
  for (const GpuScalingRow& row : rows) {
    const GpuPrediction& p = row.prediction;
    any_unknown = any_unknown || !band_is_known(p.images_per_second_low, p.images_per_second_high);
    std::string band = images_per_second_cell(p.images_per_second, p.images_per_second_low, p.images_per_second_high) +
                       " (" + format_significant(p.images_per_second_low, 3) + " - " +
                       format_significant(p.images_per_second_high, 3) + ")";
    band.resize(std::max<std::size_t>(band.size(), 31), ' ');
    std::string nodes = std::to_string(row.nodes);
    nodes.resize(std::max<std::size_t>(nodes.size(), 6), ' ');
    out << "  " << nodes << "  " << band << format_fixed(row.speedup, 2) << "x     "
        << format_fixed(100 * row.efficiency, 1) << "%      "
        << format_seconds(row.prediction.terms.exposed_communication) << "\n";
  }
  if (any_unknown) out << "  " << unknown_rows_note();
  out << "  efficiencies: " << first.efficiencies_source << "\n";
  return out.str();
}

nlohmann::json gpu_scaling_json(const std::vector<GpuScalingRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const GpuScalingRow& row : rows)
    out.push_back({{"nodes", row.nodes},
                   {"speedup", row.speedup},
                   {"efficiency", row.efficiency},
                   {"prediction", gpu_prediction_json(row.prediction)}});
  return out;
}

}  // namespace dnntune::model
