// model/plausibility.cpp — see plausibility.hpp.
#include "model/plausibility.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "workloads/costs.hpp"

namespace dnntune::model {
namespace {

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

}  // namespace

double gpu_class_saving_bound(GpuKernelClass kernel_class) {
  switch (kernel_class) {
    case GpuKernelClass::convolution:
    case GpuKernelClass::convolution_grouped:
      return winograd_f4x4_3x3_arithmetic_saving;
    default:
      return 1;
  }
}

double least_step_flops(const workloads::Network& network, std::int64_t batch) {
  if (batch < 1 || batch > workloads::max_batch) return 0;
  double flops = 0;
  for (const workloads::Layer& layer : network.layers) {
    const workloads::LayerCost cost = workloads::layer_cost(layer, batch);
    const double direct = static_cast<double>(cost.forward.flops) + static_cast<double>(cost.backward_data.flops) +
                          static_cast<double>(cost.backward_weights.flops);
    flops += direct / arithmetic_saving_bound(layer.spec);
  }
  return flops;
}

double cpu_peak_flops(const records::MachineProfile& profile, int cores) {
  const auto& peak = profile.performance.peak_fp32_gflops_per_core;
  if (!peak || !(peak->value > 0) || cores < 1) return 0;
  return peak->value * 1e9 * cores;
}

double gpu_highest_peak_flops(const GpuNode& node) {
  double highest = node.fp32_flops;
  for (const auto& peak : {node.tensor_flops, node.tf32_flops, node.bf16_flops, node.fp16_flops})
    if (peak) highest = std::max(highest, *peak);
  return highest;
}

bool band_is_known(double low, double high) { return low > 0 && high / low <= widest_band_ratio; }

Expected<void> check_answer(const std::string& what, const AnswerFigures& figures) {
  // A band's low end may be 0: a replicate of a sparse fit whose step never ends leaves the band
  // unknown (band_is_known), which the answer says; the figures themselves must be above 0.
  struct Named {
    const char* name;
    double value;
    bool zero_allowed;
  };
  const Named named[] = {{"iteration seconds", figures.iteration_seconds, false},
                         {"images/s", figures.images_per_second, false},
                         {"band low", figures.band_low, true},
                         {"band high", figures.band_high, false}};
  for (const auto& [name, value, zero_allowed] : named)
    if (!(std::isfinite(value) && (value > 0 || (zero_allowed && value == 0))))
      return failure("the model gave no usable prediction for " + what + " (" + name + " " + number_text(value) +
                     "): the calibration or the profile holds figures it cannot use");
  // A hair above the roofline is rounding, not physics.
  const double roofline = figures.roofline_images_per_second * (1 + 1e-9);
  if (figures.roofline_images_per_second > 0 && figures.images_per_second > roofline)
    return failure("the model's prediction for " + what + " (" + number_text(figures.images_per_second) +
                   " images/s) is faster than the machine's roofline allows (" +
                   number_text(figures.roofline_images_per_second) +
                   " images/s: the network's FLOPs at the fewest its algorithms need, over the peaks)");
  if (figures.iteration_seconds > longest_step_seconds)
    return failure("the model's prediction for " + what + " takes " + number_text(figures.iteration_seconds) +
                   " s a step, longer than any machine's (at most " + number_text(longest_step_seconds) +
                   " s): the calibration or the profile holds figures it cannot use");
  return {};
}

void hold_band_at_roofline(AnswerFigures& figures) {
  if (figures.roofline_images_per_second > 0)
    figures.band_high = std::min(figures.band_high, figures.roofline_images_per_second);
}

Expected<void> check_measured_step(const workloads::Network& network, std::int64_t batch_per_process, int processes,
                                   int threads, double step_seconds, const records::MachineProfile& profile,
                                   const std::string& origin, const std::string& field) {
  const double peak = cpu_peak_flops(profile, processes * threads);
  const double flops = least_step_flops(network, batch_per_process) * processes;
  if (!(peak > 0) || !(flops > 0)) return {};
  const double fastest = flops / peak;
  if (step_seconds >= fastest) return {};
  return bad_input(origin + ": (" + field + ") " + network.name + " at batch " + std::to_string(batch_per_process) +
                   " on " + std::to_string(processes) + "x" + std::to_string(threads) + " cores: a step of " +
                   number_text(step_seconds) + " s is faster than the roofline allows (at least " +
                   number_text(fastest) + " s at " + number_text(peak / 1e9) + " GFLOP/s)");
}

Expected<void> check_gpu_efficiency(double efficiency, GpuKernelClass kernel_class, const std::string& origin,
                                    const std::string& field) {
  const double bound = gpu_class_saving_bound(kernel_class);
  if (std::isfinite(efficiency) && efficiency > 0 && efficiency <= bound) return {};
  return bad_input(origin + ": (" + field + ") " + number_text(efficiency) + " is outside (0, " + number_text(bound) +
                   "]: no algorithm of a " + gpu_kernel_class_name(kernel_class) + " kernel saves more arithmetic" +
                   (bound > 1 ? " than Winograd F(4x4,3x3)" : "") + " against its peak");
}

}  // namespace dnntune::model
