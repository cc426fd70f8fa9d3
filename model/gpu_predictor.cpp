// model/gpu_predictor.cpp — see gpu_predictor.hpp.
#include "model/gpu_predictor.hpp"

#include <algorithm>
#include <cmath>

#include "common/statistics.hpp"
#include "common/text_format.hpp"
#include "model/gpu_communication.hpp"
#include "model/plausibility.hpp"
#include "workloads/costs.hpp"

namespace dnntune::model {

GpuPrecision resolved_precision(const GpuConfiguration& configuration, const GpuNode& node) {
  return configuration.precision.value_or(default_gpu_precision(node));
}

std::string describe(const GpuConfiguration& configuration) {
  std::string text = std::to_string(configuration.gpus_per_node) +
                     (configuration.gpus_per_node == 1 ? " GPU" : " GPUs") + " x batch " +
                     std::to_string(configuration.batch_per_gpu);
  if (configuration.nodes > 1) text += ", " + std::to_string(configuration.nodes) + " nodes";
  if (configuration.precision) text += ", " + gpu_precision_name(*configuration.precision);
  if (configuration.memory_format == GpuMemoryFormat::channels_last) text += " channels_last";
  return text;
}

namespace {

Expected<void> check(const GpuConfiguration& configuration, const GpuNode& node) {
  if (configuration.gpus_per_node < 1 || configuration.gpus_per_node > node.gpus_per_node)
    return bad_input(node.name + " nodes hold " + std::to_string(node.gpus_per_node) + " GPU" +
                     (node.gpus_per_node == 1 ? "" : "s") + ": GPUs per node must be 1.." +
                     std::to_string(node.gpus_per_node) + ", not " + std::to_string(configuration.gpus_per_node));
  if (configuration.batch_per_gpu < 1 || configuration.batch_per_gpu > workloads::max_batch)
    return bad_input("batch per GPU must be 1.." + std::to_string(workloads::max_batch));
  if (configuration.nodes < 1) return bad_input("nodes must be >= 1");
  if (!std::isfinite(configuration.fusion_bytes) || configuration.fusion_bytes <= 0)
    return bad_input("the fusion size must be a number of bytes > 0");
  return check_gpu_precision(node, resolved_precision(configuration, node));
}

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  return text;
}

// What the efficiencies rest on for this GPU and precision, and the band's log-sd that goes with
// it. `measured_fraction` is the share of the layer time this GPU's micro-runs timed.
void set_confidence(GpuPrediction& prediction, const GpuEfficiencies& efficiencies, const GpuNode& node,
                    GpuPrecision precision, double& log_sd) {
  log_sd = efficiencies.log_sd;
  if (efficiencies.measured_on.empty()) {
    prediction.confidence = "spec";
    prediction.confidence_reason = "spec sheet and prior efficiencies (no GPU calibration)";
    return;
  }
  const std::string name = gpu_precision_name(precision);
  const bool precision_measured =
      std::find(efficiencies.measured_precisions.begin(), efficiencies.measured_precisions.end(), name) !=
      efficiencies.measured_precisions.end();
  // Passes timed on another GPU or in another precision are not this answer's.
  if (efficiencies.measured_on != node.name || !precision_measured) prediction.measured_fraction = 0;
  if (efficiencies.measured_on == node.name) {
    const std::string share =
        format_fixed(100 * prediction.measured_fraction, 0) + "% of its layer time from micro-runs at this batch";
    // The CPU rule (model/predictor.cpp): half the layer time timed is "partly measured"; "measured"
    // needs a real step, which no GPU calibration holds.
    prediction.confidence =
        precision_measured && prediction.measured_fraction >= 0.5 ? "partly measured" : "calibrated";
    prediction.confidence_reason =
        precision_measured
            ? "efficiencies fitted to layer passes measured on this GPU in " + name + "; " + share +
                  " (band: the fit's held-out residuals; no whole step checked it)"
            : "measured on this GPU in another precision; " + name + " carried over by its peak (band widened)";
    // A precision without micro-runs rests on the peak ratio: a wider band.
    if (!precision_measured) log_sd = std::hypot(log_sd, carried_over_log_sd);
    return;
  }
  prediction.confidence = "carried over";
  prediction.confidence_reason = "efficiencies measured on " + efficiencies.measured_on +
                                 ", carried over to this GPU by its peaks per precision and bandwidth (band widened)";
  log_sd = std::hypot(log_sd, carried_over_log_sd);
}

// The priors' ranges the answer rests on, each read as a 90% interval, widen its band (`log_sd`)
// and are said among its assumptions: the convolution algorithm's speed-up over `algorithm_seconds`
// of the step, and cuDNN's share of peak on the GPU's generation.
void widen_for_priors(GpuPrediction& prediction, const GpuNode& node, double algorithm_seconds,
                      double algorithm_log_range_seconds, double& log_sd) {
  if (algorithm_seconds > 0) {
    log_sd = std::hypot(log_sd, algorithm_log_range_seconds / prediction.iteration_seconds / (2 * z_90_percent));
    prediction.assumptions.push_back(
        "fp32 convolutions as cuDNN runs them: Winograd (3x3) or FFT (5x5 and up) for " +
        std::to_string(static_cast<int>(std::lround(100 * algorithm_seconds / prediction.iteration_seconds))) +
        "% of the step, at the geometric middle of no gain and their arithmetic saving "
        "(model/convolution_algorithm.hpp)");
  }
  if (const GenerationEfficiency generation = cudnn_generation_efficiency(node.architecture);
      generation.high > generation.low) {
    log_sd = std::hypot(log_sd, std::log(generation.high / generation.low) / (2 * z_90_percent));
    prediction.assumptions.push_back(
        "cuDNN on " + node.architecture + " reaches " +
        std::to_string(static_cast<int>(std::lround(100 * generation.value))) +
        "% of the priors' share of peak (range " + std::to_string(static_cast<int>(std::lround(100 * generation.low))) +
        "-" + std::to_string(static_cast<int>(std::lround(100 * generation.high))) + "%): " + generation.source);
  }
}

}  // namespace

Expected<GpuPrediction> predict_gpu(const workloads::Network& network, const GpuNode& node,
                                    const GpuEfficiencies& efficiencies, const GpuConfiguration& configuration,
                                    bool with_efficiency) {
  if (auto valid = check(configuration, node); !valid) return valid.error();
  auto fabric = fabric_preset(configuration.fabric);
  if (!fabric) return fabric.error();
  const std::int64_t batch = configuration.batch_per_gpu;
  auto cost = workloads::network_cost(network, batch);
  if (!cost) return cost.error();

  GpuPrediction prediction;
  prediction.network = network.name;
  prediction.machine = node.name;
  prediction.configuration = configuration;
  prediction.gpu_has_tf32 = gpu_peak_flops(node, GpuPrecision::tf32).has_value();
  prediction.efficiencies_source = efficiencies.source;
  prediction.assumptions = node.assumptions;
  const GpuNumerics numerics{resolved_precision(configuration, node), configuration.memory_format};
  prediction.configuration.precision = numerics.precision;
  prediction.memory_bytes_needed = gpu_training_memory_bytes(*cost, efficiencies, numerics.precision);
  prediction.memory_bytes_available = node.memory_bytes;
  if (prediction.memory_bytes_needed > node.memory_bytes)
    return bad_input(network.name + " at batch " + std::to_string(batch) + " in " +
                     gpu_precision_name(numerics.precision) + " needs " + gigabytes(prediction.memory_bytes_needed) +
                     " per GPU (activations, weights, gradients, "
                     "momentum, framework); a " +
                     node.name + " has " + gigabytes(node.memory_bytes));

  GpuIterationTerms& terms = prediction.terms;
  double measured_seconds = 0;  // of the layer passes this GPU's micro-runs timed
  std::vector<BackwardStep> backward_order;
  backward_order.reserve(network.layers.size());
  const auto add_by_limit = [&terms](const GpuPassTime& time) {
    if (time.limit == "compute")
      terms.compute_bound += time.seconds;
    else if (time.limit == "memory")
      terms.memory_bound += time.seconds;
    else if (time.limit == "overhead")
      terms.overhead_bound += time.seconds;
  };
  double algorithm_seconds = 0, algorithm_log_range_seconds = 0;  // passes a Winograd or FFT prior speeds up
  for (const workloads::Layer& layer : network.layers) {
    const workloads::LayerCost layer_cost = workloads::layer_cost(layer, batch);
    const GpuPassTime forward =
        gpu_pass_time(layer.spec, workloads::Pass::forward, layer_cost.forward, batch, node, efficiencies, numerics);
    const GpuPassTime backward_data = gpu_pass_time(layer.spec, workloads::Pass::backward_data,
                                                    layer_cost.backward_data, batch, node, efficiencies, numerics);
    const GpuPassTime backward_weights =
        gpu_pass_time(layer.spec, workloads::Pass::backward_weights, layer_cost.backward_weights, batch, node,
                      efficiencies, numerics);
    terms.forward += forward.seconds;
    terms.backward += backward_data.seconds + backward_weights.seconds;
    for (const auto& [pass, time] :
         {std::pair{workloads::Pass::forward, &forward}, std::pair{workloads::Pass::backward_data, &backward_data},
          std::pair{workloads::Pass::backward_weights, &backward_weights}})
      if (efficiencies.measured_passes.count(gpu_pass_key(layer.descriptor, workloads::pass_name(pass), batch)))
        measured_seconds += time->seconds;
    for (const GpuPassTime* time : {&forward, &backward_data, &backward_weights}) {
      add_by_limit(*time);
      if (time->algorithm.arithmetic_saving > 1 && time->limit == "compute") {
        algorithm_seconds += time->seconds;
        algorithm_log_range_seconds +=
            time->seconds * std::log(time->algorithm.speedup_high / time->algorithm.speedup_low);
      }
    }
    backward_order.push_back({backward_data.seconds + backward_weights.seconds,
                              static_cast<double>(layer.parameters * workloads::bytes_per_gradient)});
  }
  std::reverse(backward_order.begin(), backward_order.end());
  // Gradient sums: one add kernel per tensor with several readers; spread over the backward.
  terms.gradient_sums = gpu_streaming_seconds(cost->gradient_sums, 0, node, efficiencies);
  // The optimizer: PyTorch's multi-tensor (foreach) SGD, a few launches for all parameters.
  terms.optimizer =
      gpu_streaming_seconds({cost->optimizer_update_flops, 0, cost->optimizer_update_bytes}, 4, node, efficiencies);

  const int gpus = configuration.gpus_per_node, nodes = configuration.nodes;
  std::string algorithm = "none";
  const auto allreduce_seconds = [&](double bytes) {
    const GpuAllReduce result = gpu_allreduce(bytes, gpus, nodes, node.intra_node, *fabric, node.fabric_links);
    algorithm = result.algorithm;
    return result.seconds;
  };
  const BackwardOverlap overlap = overlap_with_backward(backward_order, configuration.fusion_bytes, allreduce_seconds);
  terms.communication = gpus * nodes > 1 ? overlap.communication_seconds : 0;
  terms.exposed_communication = gpus * nodes > 1 ? overlap.exposed_seconds : 0;
  prediction.buckets = gpus * nodes > 1 ? overlap.buckets : 0;
  prediction.allreduce_algorithm = algorithm;

  prediction.iteration_seconds =
      terms.forward + terms.backward + terms.gradient_sums + terms.optimizer + terms.exposed_communication;
  const double images = static_cast<double>(batch) * gpus * nodes;
  prediction.images_per_second = images / prediction.iteration_seconds;
  const double layer_seconds = terms.forward + terms.backward;
  prediction.measured_fraction = layer_seconds > 0 ? measured_seconds / layer_seconds : 0;
  double log_sd = efficiencies.log_sd;
  set_confidence(prediction, efficiencies, node, numerics.precision, log_sd);
  widen_for_priors(prediction, node, algorithm_seconds, algorithm_log_range_seconds, log_sd);
  const double half_width = z_90_percent * log_sd;
  // The gate (model/plausibility.hpp): no faster than every GPU at its highest peak allows.
  const double flops = least_step_flops(network, batch);
  AnswerFigures figures{
      prediction.iteration_seconds, prediction.images_per_second, prediction.images_per_second * std::exp(-half_width),
      prediction.images_per_second * std::exp(half_width),
      flops > 0 ? gpu_highest_peak_flops(node) * gpus * nodes * static_cast<double>(batch) / flops : 0};
  hold_band_at_roofline(figures);
  prediction.images_per_second_low = figures.band_low;
  prediction.images_per_second_high = figures.band_high;
  if (auto usable = check_answer(network.name + ", " + describe(configuration) + " on " + node.name, figures); !usable)
    return usable.error();

  if (with_efficiency && gpus * nodes > 1) {
    GpuConfiguration single = configuration;
    single.gpus_per_node = 1;
    single.nodes = 1;
    auto alone = predict_gpu(network, node, efficiencies, single, false);
    if (!alone) return alone.error();
    prediction.scaling_efficiency = prediction.images_per_second / (alone->images_per_second * gpus * nodes);
  }
  const std::pair<double, const char*> candidates[] = {
      {terms.compute_bound, "GPU compute (compute-bound layers)"},
      {terms.memory_bound, "GPU memory bandwidth (memory-bound layers)"},
      {terms.overhead_bound, "kernel launch and framework overhead (small kernels)"},
      {terms.exposed_communication, "gradient all-reduce not hidden by the backward pass"},
      {terms.optimizer + terms.gradient_sums, "optimizer and gradient sums"}};
  prediction.bottleneck =
      std::max_element(std::begin(candidates), std::end(candidates), [](const auto& a, const auto& b) {
        return a.first < b.first;
      })->second;
  if (!(std::isfinite(prediction.memory_bytes_available) && prediction.memory_bytes_available > 0))
    return failure("the model gave no usable prediction for " + network.name + " on " + node.name +
                   ": the profile's GPU memory is not a positive size");
  return prediction;
}

}  // namespace dnntune::model
