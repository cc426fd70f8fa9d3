// model/machine_rates.hpp — what the cost model needs from a MachineProfile: peak fp32 FLOP/s
// per core, the memory bandwidth of one package as a function of how many of its cores stream
// at once, and how many NUMA nodes share it out. Measured curves are used as measured; a spec profile's curve is built
// from
// its spec figures with the assumptions stated below (and the prediction is marked as such).
#pragma once

#include <utility>
#include <vector>

#include "common/expected.hpp"
#include "records/machine_profile.hpp"

namespace dnntune::model {

// Spec-only assumptions (typical STREAM results on servers of the studies' era and later):
// one core streams at most ~12 GB/s, and all cores of a package reach ~80% of the channels'
// theoretical bandwidth.
constexpr double spec_single_core_bandwidth_gbs = 12.0;
constexpr double spec_sustained_bandwidth_fraction = 0.8;

struct MachineRates {
  double peak_gflops_per_core = 0;
  int packages = 1;
  int cores_per_package = 1;
  int pus_per_core = 1;
  // NUMA nodes with cores on one package, each with its own memory controllers (EPYC 7551: 4);
  // 1 when the package is one domain or its NUMA nodes do not split its cores evenly.
  int numa_nodes_per_package = 1;
  bool measured = false;            // true: both figures measured on the machine
  bool bandwidth_measured = false;  // the curve is the probe's STREAM triad (on consecutive cores)
  // (active cores on one package, GB/s of the package), increasing in cores.
  std::vector<std::pair<int, double>> package_bandwidth_curve;

  // GB/s of one package with `active_cores` streaming: linear between points, through (0, 0),
  // flat after the last (a saturated memory system does not speed up with more cores).
  double package_bandwidth_gbs(double active_cores) const;
  // GB/s of one NUMA node of a package with `active_cores` of its cores streaming, for a spec
  // curve: the package's curve is its NUMA nodes streaming side by side, its cores spread
  // evenly over them.
  double numa_node_bandwidth_gbs(double active_cores) const;
  // GB/s of `active_cores` consecutive cores of a package from its first, as launch lines bind
  // processes (and their memory, by first touch, to the NUMA nodes of those cores). A measured
  // curve is exactly that (the probe streams on consecutive cores); for a spec curve, the
  // bandwidth of the NUMA nodes the cores cover.
  double consecutive_cores_bandwidth_gbs(double active_cores) const;
  int cores() const { return packages * cores_per_package; }
  int cores_per_numa_node() const { return cores_per_package / numa_nodes_per_package; }
};

// Fails for a GPU profile or a CPU profile with neither measured nor spec peaks (an hwloc
// topology alone has no rates: give it a calibration or pick a --machine).
Expected<MachineRates> machine_rates(const records::MachineProfile& profile);

}  // namespace dnntune::model
