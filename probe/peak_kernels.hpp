// probe/peak_kernels.hpp — measured (never looked up) node performance: peak fp32 FMA
// throughput and sustainable memory bandwidth over 1..all cores, with and without SMT
// siblings, each a median of repetitions with its spread; plus a large oneDNN sgemm on one
// core as a cross-check of the FMA peak.
//
// Why the FMA loop has so many accumulators: a loop with too few independent FMA chains
// measures FMA latency, not throughput (on this project's 2-core machine it read about half
// of the real peak). It keeps 2 x pipes x latency chains in flight at least: 24 for AVX-512,
// 12 for AVX2.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "records/machine_profile.hpp"

namespace dnntune::probe {

struct PeakOptions {
  double seconds_per_repetition = 0.03;  // each timed FMA repetition runs about this long
  int repetitions = 7;
  // Called with a short line before each step ("fma 4 cores smt", ...), for progress output.
  std::function<void(const std::string&)> progress;
};

// The widest FMA vector path this CPU runs: "avx512", "avx2" or "sse" (multiply + add).
std::string fma_vector_isa();

// Peak FLOP/s with one thread on each OS CPU in `cpus` (the caller chooses them: one per core,
// or every SMT sibling of the cores).
records::ScalingPoint measure_fma(const std::vector<int>& cpus, int cores, bool smt, const PeakOptions& options);

// STREAM triad a[i] = b[i] + s * c[i] in double precision over arrays of `bytes_per_array`
// bytes split among threads on `cpus` (each thread first-touches its own slice); counts
// 24 bytes per element as STREAM does (no write-allocate traffic).
records::ScalingPoint measure_triad(const std::vector<int>& cpus, int cores, std::size_t bytes_per_array,
                                    const PeakOptions& options);

// A 1536^3 oneDNN sgemm on one thread pinned to `cpu`: GFLOP/s.
records::Figure measure_onednn_sgemm_one_core(int cpu, const PeakOptions& options);

// The core counts a scaling curve samples: every count up to 8, then doubling, then all.
std::vector<int> core_counts_to_measure(int cores);

// Replaces profile.performance with measurements on the cores this process may use. Needs
// profile.binding (a profile probed on this machine).
Expected<void> measure_node_performance(records::MachineProfile& profile, const PeakOptions& options);

}  // namespace dnntune::probe
