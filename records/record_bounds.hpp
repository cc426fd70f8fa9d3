// records/record_bounds.hpp — the physical bounds of what a record may say, written once per
// record type and checked where it is read (files and the Python module go through the same
// readers): a measurement's setting and result, a node's topology. A value outside them is a
// damaged or hand-edited file, never a measurement: threads -2 printed "1x-2", a median of 1e300
// or a batch of 0 went into a fit, 56.5 cores into a search. Errors are one line naming the origin
// (file, or file:line) and the field.
#pragma once

#include <cstdint>
#include <string>

#include "common/expected.hpp"
#include "records/machine_profile.hpp"
#include "records/measurement.hpp"

namespace dnntune::records {

// Threads of one process: more than any node's hardware threads (epyc-9654: 384).
constexpr int max_threads_per_process = 4096;
// Processes (ranks) and nodes of one run: the command's --nodes bound (cli/number_rules.cpp).
constexpr int max_processes = 1 << 20;
constexpr int max_nodes = 1 << 20;
// Cores and hardware threads of one node. The search space grows with them (every split of the
// cores into processes and threads, at every batch): 2 x 2000 cores ran past 120 s without a word,
// where the largest built-in node (epyc-9654) has 192 cores and 384 PUs. Eight times its PUs.
constexpr int max_node_cores = 2048;
constexpr int max_node_pus = 4096;
// One timed repetition, and any time a record or a calibration holds: 11.6 days.
constexpr double max_record_seconds = 1e6;
// One message, a cache or a node's memory: 4 PiB.
constexpr std::uint64_t max_record_bytes = std::uint64_t{1} << 52;

// What real hardware spans, for every peak, bandwidth and link a profile, a calibration or an
// option may state (model/plausibility.hpp checks the answers against the same figures). A value
// outside is not a machine: a peak of 1e-300 answered 5e-301 images/s, a link of 1e-300 Gb/s a
// step of 1.8e62 s. Each range is wide on purpose: it refuses what no machine can be, never a
// slow or a fast real one (sources: ../shared/hardware-specs.md and the vendors' sheets).
struct PhysicalRange {
  double low = 0, high = 0;
  const char* unit = "";
  bool holds(double value) const { return value >= low && value <= high; }  // false for NaN
};
// FP32 GFLOP/s of one CPU core: the slowest cores dnntune could meet do a few FLOP/cycle at ~1 GHz;
// the widest vector units do 64 FP32 FLOP/cycle (2 AVX-512 FMA ports) at up to ~6 GHz = 384.
constexpr PhysicalRange cpu_core_gflops_range{0.5, 1000, "GFLOP/s per core"};
// A core's clock: 0.1 GHz (an idle governor's floor) to 10 GHz (no shipped x86 or Arm part tops 6.2).
constexpr PhysicalRange cpu_clock_ghz_range{0.1, 10, "GHz"};
// Memory bandwidth of one package: one DDR channel gives 6-13 GB/s, HBM packages ~1 TB/s (Xeon Max,
// A64FX), MI300A 5.3 TB/s; a STREAM triad of one core can fall to a few GB/s.
constexpr PhysicalRange package_bandwidth_gbs_range{1, 10000, "GB/s per package"};
// A GPU's FP32 peak: a K80 die 4.4 TFLOP/s, an H100 67; and its tensor peaks per precision
// (H100/H200 dense bf16 989, B200 2250): 0.1 to 1000 and 0.1 to 20000 TFLOP/s.
constexpr PhysicalRange gpu_fp32_tflops_range{0.1, 1000, "TFLOP/s"};
constexpr PhysicalRange gpu_precision_tflops_range{0.1, 20000, "TFLOP/s"};
// GPU memory: a K80 die 240 GB/s, an H200 4800, B200 8000.
constexpr PhysicalRange gpu_bandwidth_gbs_range{10, 100000, "GB/s"};
// Between the GPUs of a node (a ring step's bus bandwidth, one direction): PCIe 3.0 ~10 GB/s to
// NVLink 5's 900 GB/s per direction; the host's PCIe link: PCIe 1.0 x1 to PCIe 6.0 x16 (~128 GB/s).
constexpr PhysicalRange gpu_bus_gbs_range{0.1, 5000, "GB/s"};
constexpr PhysicalRange host_pcie_gbs_range{0.1, 1000, "GB/s"};
// A node's network port, as a line rate: 1 Gb/s Ethernet to NDR InfiniBand's 400 Gb/s and
// 800 Gb/s Ethernet; twice that for what is still to come.
constexpr PhysicalRange link_line_rate_gbits_range{1, 1600, "Gb/s"};
// A link's usable bandwidth as a calibration measured it (GB/s): between nodes from below a 1 Gb/s
// port's 0.125 (TCP over a loaded or virtual network) to twice an 800 Gb/s port; within a node
// (shared memory, NVLink) up to 10 TB/s.
constexpr PhysicalRange inter_node_bandwidth_gbs_range{0.01, 200, "GB/s"};
constexpr PhysicalRange intra_node_bandwidth_gbs_range{0.01, 10000, "GB/s"};

// "ORIGIN: (FIELD) VALUE is outside LOW..HIGH UNIT (what real hardware spans)", or nothing.
Expected<void> check_physical(double value, const PhysicalRange& range, const std::string& origin,
                              const std::string& field);

// A measurement (records/measurement.hpp) within bounds: threads 1..4096, processes and nodes
// 1..2^20, a batch of 0..workloads::max_batch (at least 1 for an ok layer, network or module
// record), message bytes 0..2^52, finite seconds within 0..1e6 (an ok record's median above 0),
// a coefficient of variation >= 0, repetitions >= 0 (>= 1 for an ok record), CPU numbers 0..2^20.
Expected<void> check_measurement_bounds(const Measurement& measurement, const std::string& origin);

// A node's topology within bounds: at most max_node_cores cores and max_node_pus PUs, at least one
// package, core and PU per core, sizes and memory 0..2^52, caches of level 1..4 with at least one
// instance and one PU sharing each. The limit is the same for a profile and an hwloc XML file.
Expected<void> check_topology_bounds(const Topology& topology, const std::string& origin);

}  // namespace dnntune::records
