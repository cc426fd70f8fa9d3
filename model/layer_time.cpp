// model/layer_time.cpp — see layer_time.hpp.
#include "model/layer_time.hpp"

#include <algorithm>
#include <cmath>

namespace dnntune::model {

int cores_used(const ExecutionSetting& setting, int pus_per_core) {
  if (!setting.smt || pus_per_core <= 1) return setting.threads;
  return (setting.threads + pus_per_core - 1) / pus_per_core;
}

double usl_speedup(double cores, double contention, double coherency) {
  return cores / (1 + contention * (cores - 1) + coherency * cores * (cores - 1));
}

double work_imbalance(const LayerWork& work, int threads, double work_item_channels) {
  if (!(work_item_channels > 0) || !(work.split_rows > 0) || !(work.split_channels > 0) || threads <= 1) return 1;
  const double items = work.split_rows * std::ceil(work.split_channels / work_item_channels);
  return std::ceil(items / threads) * threads / items;
}

double cross_package_bandwidth_factor(int packages_spanned, double cross_package_bandwidth_ratio) {
  if (packages_spanned <= 1) return 1;
  const double remote_share = static_cast<double>(packages_spanned - 1) / packages_spanned;
  return std::min(1.0, cross_package_bandwidth_ratio / remote_share);
}

double fork_join_seconds(int threads, double seconds_per_doubling) {
  return threads > 1 ? seconds_per_doubling * std::log2(static_cast<double>(threads)) : 0;
}

LayerTime layer_time(const LayerWork& work, const ExecutionSetting& setting, const ModelParameters& parameters,
                     const MachineRates& rates) {
  const ClassParameters& of_class = parameters.of(work.layer_class);
  const int cores = cores_used(setting, rates.pus_per_core);
  const double extra_threads_per_core = static_cast<double>(setting.threads - cores) / cores;
  const double smt_factor = std::max(0.05, 1 + of_class.smt_gain * extra_threads_per_core);
  const double corun_factor = 1 / (1 + of_class.corun_slowdown * (setting.co_running - 1));
  const double flops_per_second = rates.peak_gflops_per_core * 1e9 * of_class.efficiency[work.pass] *
                                  usl_speedup(cores, of_class.contention, of_class.coherency) * smt_factor *
                                  corun_factor / work_imbalance(work, setting.threads, parameters.work_item_channels);
  const int spanned = std::max(1, setting.packages_spanned);
  const double streaming_cores_per_package = static_cast<double>(setting.co_running) * cores / spanned;
  // The processes of a package are bound to consecutive cores from its first (mpirun
  // --map-by ppr:N:socket:PE=M) and share what those cores stream.
  const double package_gbs = rates.consecutive_cores_bandwidth_gbs(streaming_cores_per_package);
  const double process_gbs = spanned * package_gbs / setting.co_running *
                             cross_package_bandwidth_factor(spanned, parameters.cross_package_bandwidth_ratio);
  const double bytes_per_second = parameters.bandwidth_efficiency * process_gbs * 1e9;

  LayerTime time;
  time.compute_seconds = work.flops > 0 ? work.flops / flops_per_second : 0;
  time.memory_seconds = work.bytes > 0 ? work.bytes / bytes_per_second : 0;
  time.overhead_seconds = of_class.overhead_seconds[work.pass] +
                          fork_join_seconds(setting.threads, parameters.fork_join_seconds_per_doubling);
  const double g = parameters.smooth_max_exponent;
  const double larger = std::max(time.compute_seconds, time.memory_seconds);
  // (a^g + b^g)^(1/g) computed relative to the larger term, so it cannot overflow for large g.
  const double smooth_max =
      larger <= 0
          ? 0
          : larger *
                std::pow(std::pow(time.compute_seconds / larger, g) + std::pow(time.memory_seconds / larger, g), 1 / g);
  time.total_seconds = smooth_max + time.overhead_seconds;
  return time;
}

}  // namespace dnntune::model
