// model/layer_time.hpp — the time of one layer pass in one process: the named terms of the
// cost model, each doing one thing.
//
//   compute  Tc = F / (P_core * efficiency[class,pass] * U(cores) * smt * corun)
//            U(n) = n / (1 + s (n-1) + c n (n-1))            universal scalability law
//            smt  = 1 + smt_gain * (extra hardware threads per core)
//            corun = 1 / (1 + corun_slowdown * (co-running processes - 1))   shared caches
//   memory   Tm = Q / (bandwidth_efficiency * BW_consecutive(p * cores) / p)
//            all p co-running processes of a package share the saturating bandwidth of the
//            consecutive cores they are bound to (for a spec machine, that of the NUMA nodes
//            those cores cover: machine_rates.hpp)
//   layer    T  = (Tc^g + Tm^g)^(1/g) + overhead[class,pass]
//
// Why a smooth max and not max(Tc, Tm): kernels overlap compute and memory imperfectly; g is
// fitted (g = 1 is the sum, large g the roofline's max).
#pragma once

#include "model/layer_class.hpp"
#include "model/machine_rates.hpp"
#include "model/parameters.hpp"

namespace dnntune::model {

// What a layer pass costs, independent of where it runs.
struct LayerWork {
  LayerClass layer_class = LayerClass::conv_spatial;
  int pass = 0;  // pass_index()
  double flops = 0;
  double bytes = 0;
};

// Where it runs: one process with `threads` threads, alongside `co_running` processes
// (itself included) on the same package, each with as many threads. A process wider than a
// package spans `packages_spanned` packages and streams from all of them.
struct ExecutionSetting {
  int threads = 1;
  bool smt = false;  // threads are packed two (or more) per core on SMT siblings
  int co_running = 1;
  int packages_spanned = 1;
};

struct LayerTime {
  double compute_seconds = 0;
  double memory_seconds = 0;
  double overhead_seconds = 0;
  double total_seconds = 0;
};

// Physical cores a process with this setting occupies.
int cores_used(const ExecutionSetting& setting, int pus_per_core);

// The universal scalability law's speed-up over one core.
double usl_speedup(double cores, double contention, double coherency);

LayerTime layer_time(const LayerWork& work, const ExecutionSetting& setting, const ModelParameters& parameters,
                     const MachineRates& rates);

}  // namespace dnntune::model
