// tuner/gpu_recommendation.cpp — see gpu_recommendation.hpp.
#include "tuner/gpu_recommendation.hpp"

#include <algorithm>
#include <sstream>

#include "common/text_format.hpp"
#include "model/gpu_report.hpp"
#include "tuner/job_script.hpp"

namespace dnntune::tuner {
namespace {

double score(const model::GpuPrediction& prediction, GpuObjective objective) {
  if (objective == GpuObjective::images_per_node) return prediction.images_per_second / prediction.configuration.nodes;
  return prediction.images_per_second;
}

std::string objective_name(GpuObjective objective) {
  return objective == GpuObjective::images_per_node ? "images-per-node" : "throughput";
}

std::string one_line(const model::GpuPrediction& p) {
  return model::describe(p.configuration) + ": " + format_significant(p.images_per_second, 3) + " images/s (90% band " +
         format_significant(p.images_per_second_low, 3) + " - " + format_significant(p.images_per_second_high, 3) + ")";
}

std::vector<std::string> settings_of(const model::GpuPrediction& p) {
  return model::gpu_script_settings(p.configuration.precision.value_or(model::GpuPrecision::fp32),
                                    p.configuration.memory_format, p.gpu_has_tf32);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += (text.empty() ? "" : "; ") + line;
  return text;
}

// The variables the job script and launch lines export for the pick (job_script.hpp).
nlohmann::json script_environment(const model::GpuPrediction& p) {
  nlohmann::json environment = nlohmann::json::object();
  for (const auto& [name, value] : gpu_training_environment(p.configuration)) environment[name] = value;
  return environment;
}

}  // namespace

std::vector<int> default_gpu_counts(int gpus_per_node) {
  std::vector<int> counts;
  for (int count = 1; count < gpus_per_node; count *= 2) counts.push_back(count);
  counts.push_back(gpus_per_node);
  return counts;
}

Expected<GpuRecommendation> recommend_gpu(const workloads::Network& network, const model::GpuNode& node,
                                          const model::GpuEfficiencies& efficiencies, const GpuSearchOptions& options) {
  GpuRecommendation recommendation;
  recommendation.objective = options.objective;
  const std::vector<int> gpu_counts =
      options.gpus_per_node.empty() ? default_gpu_counts(node.gpus_per_node) : options.gpus_per_node;
  std::vector<model::GpuPrecision> precisions = options.precisions;
  if (precisions.empty())
    for (int index = 0; index < model::gpu_precision_count; ++index)
      if (model::check_gpu_precision(node, static_cast<model::GpuPrecision>(index)))
        precisions.push_back(static_cast<model::GpuPrecision>(index));
  // By default channels_last only under autocast: there cuDNN's tensor-core kernels want NHWC;
  // in fp32 and TF32 the model sees no difference, and the answer stays contiguous.
  const auto formats_for = [&](model::GpuPrecision precision) {
    if (!options.memory_formats.empty()) return options.memory_formats;
    std::vector<model::GpuMemoryFormat> formats{model::GpuMemoryFormat::contiguous};
    if (model::is_mixed_precision(precision)) formats.push_back(model::GpuMemoryFormat::channels_last);
    return formats;
  };
  for (model::GpuPrecision precision : precisions)
    for (model::GpuMemoryFormat memory_format : formats_for(precision))
      for (int gpus : gpu_counts)
        for (std::int64_t batch : options.batches_per_gpu)
          for (double megabytes : options.fusion_megabytes)
            for (int nodes : options.node_counts) {
              model::GpuConfiguration configuration;
              configuration.gpus_per_node = gpus;
              configuration.batch_per_gpu = batch;
              configuration.nodes = nodes;
              configuration.fusion_bytes = megabytes * 1024 * 1024;
              configuration.fabric = options.fabric;
              configuration.precision = precision;
              configuration.memory_format = memory_format;
              ++recommendation.space_size;
              auto prediction = model::predict_gpu(network, node, efficiencies, configuration, false);
              if (!prediction) {
                recommendation.excluded.push_back({configuration, prediction.error().message});
                continue;
              }
              recommendation.ranking.push_back(std::move(*prediction));
            }
  if (recommendation.ranking.empty())
    return bad_input("no configuration fits: " + (recommendation.excluded.empty()
                                                      ? std::string("the search space is empty")
                                                      : recommendation.excluded.front().reason));
  std::stable_sort(recommendation.ranking.begin(), recommendation.ranking.end(),
                   [&](const model::GpuPrediction& a, const model::GpuPrediction& b) {
                     return score(a, options.objective) > score(b, options.objective);
                   });
  // The winner again, with its scaling efficiency (the ranking pass leaves it out).
  auto best = model::predict_gpu(network, node, efficiencies, recommendation.ranking.front().configuration, true);
  if (!best) return best.error();
  recommendation.best = std::move(*best);
  recommendation.ranking.front() = recommendation.best;
  for (const model::GpuPrediction& prediction : recommendation.ranking) {
    auto& slot = model::is_mixed_precision(*prediction.configuration.precision) ? recommendation.best_mixed
                                                                                : recommendation.best_strict;
    if (slot) continue;
    auto full = model::predict_gpu(network, node, efficiencies, prediction.configuration, true);
    if (!full) return full.error();
    slot = std::move(*full);
  }
  return recommendation;
}

std::string gpu_recommendation_text(const GpuRecommendation& r, bool explain) {
  std::ostringstream out;
  const model::GpuPrediction& best = r.best;
  out << "Recommended for " << best.network << " on " << best.machine << " (GPU, objective "
      << objective_name(r.objective) << "):\n";
  out << "  " << model::describe(best.configuration) << ", fusion "
      << format_fixed(best.configuration.fusion_bytes / (1024 * 1024), 0) << " MiB\n";
  out << "  images/s " << format_significant(best.images_per_second, 3) << " (90% band "
      << format_significant(best.images_per_second_low, 3) << " - "
      << format_significant(best.images_per_second_high, 3) << "), "
      << format_fixed(best.images_per_second / (best.configuration.gpus_per_node * best.configuration.nodes), 1)
      << " per GPU";
  if (best.configuration.gpus_per_node * best.configuration.nodes > 1)
    out << ", scaling efficiency " << format_fixed(100 * best.scaling_efficiency, 1) << "%";
  out << "\n  confidence: " << best.confidence << " (" << best.confidence_reason << ")\n";
  out << "  bottleneck: " << best.bottleneck << "\n";
  out << "  your training script must set:\n";
  for (const std::string& setting : settings_of(best)) out << "    " << setting << "\n";
  // Each side of the strict / mixed choice with what it asks of the script: taking the other one
  // means changing the script, not only the launch.
  if (r.best_strict)
    out << "  best strict precision: " << one_line(*r.best_strict)
        << "\n    your training script must set: " << joined(settings_of(*r.best_strict)) << "\n";
  if (r.best_mixed)
    out << "  best mixed precision:  " << one_line(*r.best_mixed)
        << "\n    your training script must set: " << joined(settings_of(*r.best_mixed)) << "\n";
  out << "  memory: " << format_fixed(best.memory_bytes_needed / 1e9, 1) << " of "
      << format_fixed(best.memory_bytes_available / 1e9, 1) << " GB per GPU\n";
  const std::size_t shown = explain ? r.ranking.size() : std::min<std::size_t>(r.ranking.size(), 5);
  out << "  ranking (" << r.ranking.size() << " valid of " << r.space_size << "):\n";
  for (std::size_t index = 0; index < shown; ++index) {
    const model::GpuPrediction& p = r.ranking[index];
    out << "    " << index + 1 << ". " << model::describe(p.configuration) << ", fusion "
        << format_fixed(p.configuration.fusion_bytes / (1024 * 1024), 0)
        << " MiB: " << format_significant(p.images_per_second, 3) << " images/s\n";
  }
  if (!r.excluded.empty()) {
    out << "  excluded: " << r.excluded.size() << (explain ? "" : " (--explain lists them)") << "\n";
    if (explain)
      for (const GpuExcludedPoint& point : r.excluded)
        out << "    " << model::describe(point.configuration) << ": " << point.reason << "\n";
  }
  out << "  efficiencies: " << best.efficiencies_source << "\n";
  for (const std::string& assumption : best.assumptions) out << "  assumed: " << assumption << "\n";
  return out.str();
}

nlohmann::json gpu_recommendation_json(const GpuRecommendation& r, bool explain) {
  nlohmann::json out = {{"schema", "dnntune.gpu-recommendation"},
                        {"schema_version", 1},
                        {"objective", objective_name(r.objective)},
                        {"best", model::gpu_prediction_json(r.best)},
                        {"script_settings", settings_of(r.best)},
                        {"script_environment", script_environment(r.best)},
                        {"space_size", r.space_size},
                        {"valid", r.ranking.size()}};
  nlohmann::json ranking = nlohmann::json::array();
  const std::size_t shown = explain ? r.ranking.size() : std::min<std::size_t>(r.ranking.size(), 5);
  for (std::size_t index = 0; index < shown; ++index) ranking.push_back(model::gpu_prediction_json(r.ranking[index]));
  out["ranking"] = ranking;
  nlohmann::json excluded = nlohmann::json::array();
  for (const GpuExcludedPoint& point : r.excluded)
    excluded.push_back(
        {{"configuration", model::gpu_configuration_json(point.configuration)}, {"reason", point.reason}});
  out["excluded"] = excluded;
  if (r.best_strict) out["best_strict_precision"] = model::gpu_prediction_json(*r.best_strict);
  if (r.best_mixed) out["best_mixed_precision"] = model::gpu_prediction_json(*r.best_mixed);
  return out;
}

}  // namespace dnntune::tuner
