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
