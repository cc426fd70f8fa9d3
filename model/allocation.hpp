// model/allocation.hpp — the memory allocator as a term of the model. One training step writes
// into buffers it allocates for that step (every layer's output, every input gradient, the
// weight gradients: the trainer drops them each step). An allocator that hands that memory back
// to the kernel between steps faults it in again; one that keeps it does not. Per process and
// step:
//
//   allocation seconds = fresh bytes per step x fault seconds per byte x non-reuse(allocator)
//
// The fault cost is the probe's first-touch figure (ns per 4 KiB page; with several threads the
// faults of one process are shared by its threads). The non-reuse fraction is fitted per
// allocator variant from short real-training anchors run under each (calibrate --anchor):
// glibc keeping all freed memory (glibc-tuned) maps nothing fresh after the first step, so it is
// the reference at 0, and each other variant's anchor at the same network, batch and setting
// gives   non-reuse = (its step - glibc-tuned's step) / (fresh bytes x fault cost).
// It is an effective fraction: above 1 when an allocator faults in more than the counted buffers
// (workspaces, memory purged and touched again within a step), below 0 when it runs faster than
// glibc keeping its memory for other reasons (cheaper malloc calls). The band comes from the
// anchors' step-to-step spread.
// The fraction also depends on how many threads allocate in one process: glibc gives each thread
// an arena of its own, trimmed on its own, so its defaults fault in more with two threads in one
// process than with one thread in each of two processes, and the layout a close call picks under
// glibc's defaults can lose under the allocator the answer recommends. Pairs measured at several
// thread counts are therefore also fitted per count, and a prediction at a count that has its own
// pairs uses them (the pooled fit elsewhere).
//
// Kept out of the fitted parameter vector (model/parameters.hpp): the layer micro-runs and the
// default anchor already include the default allocator's cost, so the prediction under a variant
// is the prediction under the default plus the difference of the two allocation terms.
// Without fitted variants (an older calibration, anchors skipped) a prior applies: every variant
// but glibc-tuned at 0.5 with the band 0..1, glibc-tuned at 0; the band of a prediction that
// rests on a prior always holds "no gain", so an unmeasured variant is never recommended.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/expected.hpp"
#include "model/measured_setups.hpp"
#include "records/machine_profile.hpp"
#include "records/measurement.hpp"
#include "workloads/graph.hpp"

namespace dnntune::model {

constexpr const char* reference_allocator = records::kReferenceAllocator;

struct AllocatorFit {
  std::string name;          // "default", "glibc-tuned", "jemalloc", "tcmalloc"
  double non_reuse = 0;      // effective fraction of a step's fresh bytes faulted in again
  double low = 0, high = 0;  // 90% band
  int anchors = 0;           // anchors it was fitted from; 0: the prior
  // One standard deviation of non_reuse from this variant's own anchors alone, without the
  // glibc-tuned reference's spread that low..high includes: comparing two variants measured
  // against the same reference, that reference cancels, and counting it twice made every band
  // hold "no gain". Negative when unknown (a calibration written before it): low..high is used.
  double own_sd = -1;
  // 0: pooled over the pairs of every setting; else fitted from the pairs at this many threads
  // per process alone (present only when the pairs span several thread counts).
  int threads = 0;
};

struct AllocationModel {
  double fault_ns_per_page = 0;            // one thread faulting (probe)
  double fault_ns_per_page_all_cores = 0;  // every core faulting at once, per thread (probe)
  std::vector<AllocatorFit> variants;
  // The variant `name`: its own fit at `threads` per process when it and glibc's defaults both have
  // one there (their difference is what a prediction uses: both from the same pairs), else the
  // pooled fit, else its prior.
  AllocatorFit variant(const std::string& name, int threads = 0) const;
  // Whether `name` has a fit of its own at `threads` per process.
  bool fitted_at(const std::string& name, int threads) const;
  // The threads per process of the pairs behind the pooled fits, ascending; empty where unknown
  // (a calibration written before it).
  std::vector<int> paired_threads;
  // Whether `name`'s gain at `threads` per process rests on pairs trained there: a fit of its own
  // there, or the pooled fit when every pair ran at that count.
  bool measured_at(const std::string& name, int threads) const;
  // Whole setups PyTorch timed under an allocator (model/measured_setups.hpp): a close call's
  // sides, timed as the user's job runs them.
  std::vector<MeasuredSetup> pytorch_setups;
};

// An allocator's name as records and calibrations hold it: lower-case letters, digits and '-'.
bool valid_allocator_name(const std::string& name);

// The prior of a variant (see above).
AllocatorFit allocator_prior(const std::string& name);

// The model with priors only, from the machine's probed fault cost; none without that figure
// (a spec machine, a profile probed before it was measured).
std::optional<AllocationModel> prior_allocation(const records::MachineProfile& machine);

// Bytes one process allocates afresh in one training step at `batch`: every layer's output but
// views (flatten), the gradient of every input of a layer that computes data gradients, and
// one gradient per parameter.
double fresh_bytes_per_step(const workloads::Network& network, std::int64_t batch);

// Seconds one process of `threads` threads spends per byte faulted in, with `processes` such
// processes on the node (several faulting at once pay the all-cores cost).
double fault_seconds_per_byte(const AllocationModel& model, int threads, int processes);

// The allocation term of one step under `allocator`.
double allocation_seconds(const AllocationModel& model, const std::string& allocator, double fresh_bytes, int threads,
                          int processes);

// One real step under an allocator variant: what the fit reads from the anchors.
struct AllocatorAnchor {
  std::string allocator;
  std::string network;
  std::int64_t batch = 0;
  int threads = 1;
  bool smt = false;
  int processes = 1;
  double iteration_seconds = 0;         // median
  double iteration_spread_seconds = 0;  // one standard deviation of a step
  double fresh_bytes = 0;               // fresh_bytes_per_step of the network at the batch
};

// Fits each variant's non-reuse fraction against glibc-tuned's anchor of the same network, batch
// and setting. Variants without a matching reference anchor keep their prior. Fails when the
// fault costs are not positive.
Expected<AllocationModel> fit_allocation(const std::vector<AllocatorAnchor>& anchors, double fault_ns_per_page,
                                         double fault_ns_per_page_all_cores);

// The anchors among measurement records (kind network, ok, one node, of one trainer: per network,
// batch and setting PyTorch's from Python where it ran glibc's defaults and glibc-tuned there, else
// the C++ trainer's; the newest glibc-tuned run and each other allocator's run nearest to it in
// file order) of this machine and backend, and the fit; none when the machine has no probed
// fault cost or no variant was anchored next to glibc-tuned. With the fit, the setups PyTorch
// timed (measured_setups_from_records).
std::optional<AllocationModel> fit_allocation_from_records(const std::vector<records::Measurement>& records,
                                                           const records::MachineProfile& machine,
                                                           const std::string& backend);

// The prediction of one step under `allocator` from the one under the default allocator. Its band
// is that of the paired difference of the two variants (their own spreads) when both are fitted.
struct AllocatorPrediction {
  std::string name;
  double iteration_seconds = 0;
  double iteration_seconds_low = 0, iteration_seconds_high = 0;  // the allocator term's band only
  double gain = 1;                                               // default's step / this step: > 1 is faster
  double gain_low = 1, gain_high = 1;
  bool measured = false;  // fitted from anchors (else the prior)
};
AllocatorPrediction predict_allocator(const AllocationModel& model, const std::string& allocator,
                                      double default_iteration_seconds, double fresh_bytes, int threads, int processes);

// The calibration file's optional "allocation" member, and back (values checked).
nlohmann::json allocation_to_json(const AllocationModel& model);
Expected<AllocationModel> allocation_from_json(const nlohmann::json& in, const std::string& origin);

}  // namespace dnntune::model
