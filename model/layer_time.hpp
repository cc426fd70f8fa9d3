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
// Three node terms, at their priors free (a fit never frees them; a spec answer's priors set them):
//   imbalance  Tc x ceil(items / threads) x threads / items: the threads split a pass's work items
//              evenly but whole (oneDNN's balance211), so the last round runs part empty
//   remote     a process spanning k packages streams at min(1, r k / (k-1)) of the rate above:
//              (k-1)/k of its bytes sit on another package, and the link carries r of local
//   fork-join  + fork_join_seconds_per_doubling x log2(threads): each pass is one parallel
//              region, whose closing barrier grows with log2 of its threads (as measured)
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
  // How its threads split it (0: not modelled): oneDNN's direct convolution deals out batch x
  // rows x channel chunks of the tensor the pass writes (see parallel_split in predictor.cpp).
  double split_rows = 0;      // batch x rows
  double split_channels = 0;  // channels, cut into work items of work_item_channels
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

// The node terms (above), each alone: the factor on compute time for `threads` dealing out the
// work's items; the factor on a spanning process's bandwidth; a pass's fork-join seconds.
double work_imbalance(const LayerWork& work, int threads, double work_item_channels);
double cross_package_bandwidth_factor(int packages_spanned, double cross_package_bandwidth_ratio);
double fork_join_seconds(int threads, double seconds_per_doubling);

LayerTime layer_time(const LayerWork& work, const ExecutionSetting& setting, const ModelParameters& parameters,
                     const MachineRates& rates);

}  // namespace dnntune::model
