// model/machine_rates.cpp — see machine_rates.hpp.
#include "model/machine_rates.hpp"

#include <algorithm>
#include <cmath>

namespace dnntune::model {

double MachineRates::package_bandwidth_gbs(double active_cores) const {
  if (package_bandwidth_curve.empty() || active_cores <= 0) return 0;
  double previous_cores = 0, previous_gbs = 0;
  for (const auto& [cores, gbs] : package_bandwidth_curve) {
    if (active_cores <= cores)
      return previous_gbs + (gbs - previous_gbs) * (active_cores - previous_cores) / (cores - previous_cores);
    previous_cores = cores;
    previous_gbs = gbs;
  }
  return package_bandwidth_curve.back().second;
}

double MachineRates::numa_node_bandwidth_gbs(double active_cores) const {
  return package_bandwidth_gbs(active_cores * numa_nodes_per_package) / numa_nodes_per_package;
}

double MachineRates::consecutive_cores_bandwidth_gbs(double active_cores) const {
  if (bandwidth_measured || numa_nodes_per_package <= 1) return package_bandwidth_gbs(active_cores);
  const int covered =
      std::clamp(static_cast<int>(std::ceil(active_cores / cores_per_numa_node() - 1e-9)), 1, numa_nodes_per_package);
  return covered * numa_node_bandwidth_gbs(active_cores / covered);
}

namespace {

// NUMA nodes with cores per package, when every package has the same number and they split
// its cores evenly (memory-only nodes, such as KNL's MCDRAM, hold no cores and do not count).
int numa_nodes_per_package(const records::Topology& topology, int packages, int cores_per_package) {
  int with_cores = 0;
  for (const auto& node : topology.numa_list)
    if (node.cores > 0) ++with_cores;
  if (with_cores == 0) with_cores = topology.numa_nodes;  // spec profiles may list none
  if (with_cores <= packages || with_cores % packages != 0) return 1;
  const int per_package = with_cores / packages;
  return cores_per_package % per_package == 0 ? per_package : 1;
}

}  // namespace

Expected<MachineRates> machine_rates(const records::MachineProfile& profile) {
  if (profile.kind != records::MachineKind::cpu_node)
    return bad_input(profile.name +
                     ": the CPU cost model needs a CPU node profile (a GPU is answered by the GPU "
                     "model: dnntune predict, scale, recommend or compare --machine GPU)");
  MachineRates rates;
  const auto& topology = profile.topology;
  rates.packages = std::max(1, topology.packages);
  rates.cores_per_package = std::max(1, topology.cores_per_package);
  rates.pus_per_core = std::max(1, topology.pus_per_core);
  rates.numa_nodes_per_package = numa_nodes_per_package(topology, rates.packages, rates.cores_per_package);
  const auto& performance = profile.performance;
  if (!performance.peak_fp32_gflops_per_core)
    return bad_input(profile.name +
                     ": no peak FLOP/s (measured or spec); probe the machine or use a built-in --machine");
  rates.peak_gflops_per_core = performance.peak_fp32_gflops_per_core->value;

  // Measured: the triad points that fit in one package (the probe fills packages in order).
  for (const auto& point : performance.triad_scaling)
    if (!point.smt && point.cores <= rates.cores_per_package)
      rates.package_bandwidth_curve.emplace_back(point.cores, point.median);
  std::sort(rates.package_bandwidth_curve.begin(), rates.package_bandwidth_curve.end());
  const bool measured_peak = performance.peak_fp32_gflops_per_core->provenance == records::Provenance::measured;
  if (!rates.package_bandwidth_curve.empty()) {
    rates.bandwidth_measured = true;
    rates.measured = measured_peak;
    return rates;
  }
  if (!performance.memory_bandwidth_gbs_per_package)
    return bad_input(profile.name + ": no memory bandwidth (measured or spec)");
  const double sustained = spec_sustained_bandwidth_fraction * performance.memory_bandwidth_gbs_per_package->value;
  for (int cores = 1; cores <= rates.cores_per_package; ++cores)
    rates.package_bandwidth_curve.emplace_back(cores, std::min(sustained, cores * spec_single_core_bandwidth_gbs));
  return rates;
}

}  // namespace dnntune::model
