// calibrate/plan.hpp — what a calibration measures, and how it stays within its time budget.
// Pure: no hardware is touched, so the plan is printed before anything runs and tested alone.
//
// The grid: every distinct layer pass of the chosen networks (deduplicated by descriptor
// across all of them), for each backend and batch, at each setting — threads per process,
// SMT siblings or not, co-running processes; plus one whole-network training step per network,
// backend and batch at the base setting, for the additivity check.
//
// The budget: each measurement's time is estimated from its FLOPs and bytes, the machine's
// measured FMA peak and memory bandwidth, and the timing discipline. When the whole grid does
// not fit, measurements are kept by priority:
//   1. every distinct layer at the base setting (all cores, one process) — the model needs each
//      layer at least once; should even that not fit, layers are taken class by class in the
//      spread order below. With the base setting's class extremes come the extremes at the first
//      setting of a thread count where the framework runs the layer on another kernel (a
//      dispatch cliff: libtorch's own 1x1 convolution at one thread, far slower than oneDNN's);
//   2. the other settings for the two extremes of each layer class (its largest and smallest
//      layer), so every class has a thread-scaling, SMT and contention curve at two sizes;
//   3. the whole-network runs;
//   4. the other settings for further layers of each class, in spread order (the median, then
//      the quartiles, ...), round-robin over classes, as long as they fit.
// A layer class is the layer's kernel shape (workloads/kernel_class.hpp: the kind refined where
// kernels differ, 1x1 / 3x3 / other / grouped convolutions, strided or not; max / average pooling ...). The runner
// re-applies the same
// selection at run time with estimates corrected by what it has measured.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "probe/timing.hpp"
#include "workloads/costs.hpp"
#include "workloads/graph.hpp"
#include "workloads/layer.hpp"

namespace dnntune::calibrate {

// How one process (of `processes` running the same work at once) runs.
struct Setting {
  int threads = 1;    // per process
  bool smt = false;   // threads on every SMT sibling of threads/ways cores, not one per core
  int processes = 1;  // co-running processes, each on its own cores

  int cores_per_process(int smt_ways) const { return smt ? threads / smt_ways : threads; }
  bool operator==(const Setting& other) const {
    return threads == other.threads && smt == other.smt && processes == other.processes;
  }
  bool operator!=(const Setting& other) const { return !(*this == other); }
};

// "2 threads", "1 thread x 2 processes", "4 threads smt".
std::string to_string(const Setting& setting);

// The arithmetic a GPU layer pass runs in (train/precision.hpp's words): fp32 (strict), tf32, or
// bf16 / fp16 as autocast runs them (activations and convolution weights in the low precision,
// batch-norm parameters and the loss in fp32), with the memory format of its tensors. CPU
// backends run fp32 contiguous only.
struct MicroPrecision {
  std::string precision = "fp32";
  std::string memory_format = "contiguous";
  bool operator==(const MicroPrecision& other) const {
    return precision == other.precision && memory_format == other.memory_format;
  }
};

// "bf16" or "bf16:channels_last" (PRECISION[:FORMAT]); without a format bf16 and fp16 go with
// channels_last (as mixed precision is run), fp32 and tf32 with contiguous. bad_input on other words.
Expected<MicroPrecision> parse_micro_precision(const std::string& word);
// The word back, the format always named: "bf16:channels_last", "fp32:contiguous".
std::string to_string(const MicroPrecision& precision);

// The settings of the grid on a node with `cores` usable cores of `smt_ways` hardware threads,
// the base setting (all cores, one thread each, one process) first: threads 1..cores in the
// probe's steps (every count up to 8, then doubling), the same with SMT siblings, and 2..cores
// co-running processes sharing the node (one thread each, and all cores split between them).
std::vector<Setting> grid_settings(int cores, int smt_ways);

// The name of the kernel shape the layer picks (workloads/kernel_class.hpp): "conv1x1",
// "conv3x3_strided", "relu6", "linear", "softmax_loss", ... The plan samples by it.
std::string layer_class(const workloads::LayerSpec& spec);

struct PlannedMeasurement {
  std::string backend;
  bool whole_network = false;
  std::string network;        // whole-network runs only (layers are shared by networks)
  std::string descriptor;     // layer runs
  workloads::LayerSpec spec;  // layer runs
  workloads::Pass pass = workloads::Pass::forward;
  std::int64_t batch = 1;
  Setting setting;
  MicroPrecision precision;  // always fp32 contiguous on a CPU backend
  int priority = 0;          // lower is kept first (see the top of this file)
  // The framework runs this layer on another kernel here than at the base setting (a dispatch
  // cliff): run first, and kept out of the runner's estimate corrections of the other measurements.
  bool other_kernel = false;
  double estimated_seconds = 0;
  double estimated_run_seconds = 0;  // one run, without set-up and warm-up: what a training step sums
};

// What measurements cost on this machine (the runner corrects it with what it measures).
struct SpeedModel {
  double peak_gflops_per_core = 50;  // the probe's FMA peak
  double bandwidth_gbs = 20;         // the node's memory bandwidth, shared by co-running processes
  double efficiency = 0.4;           // share of the peak layer kernels reach
  // The probe's first touch of a fresh 4 KiB page, by one thread and with every core faulting at
  // once (co-running processes). On a VM it can cost more than the layer itself: a micro-run
  // faults in its operand sets once and every output glibc maps afresh (settled_mmap_threshold_bytes)
  // in each run.
  double first_touch_seconds_per_page = 0.5e-6;
  double first_touch_seconds_per_page_all_cores = 0.5e-6;
  // What the runner's operand sets span (runner.hpp, PreparedCalibration): how many sets a
  // micro-run fills and warms up through.
  std::int64_t last_level_cache_bytes = std::int64_t{32} << 20;
  double setup_seconds = 0.04;          // per measurement: kernels created, operands allocated and filled
  double network_setup_seconds = 0.5;   // per whole-network run: building the network
  double run_overhead_seconds = 30e-6;  // per run: dispatch
  double worker_start_seconds = 0.3;    // per backend and setting: starting the worker processes
  double check_seconds = 0.1;           // per backend: the numerical check
  int smt_ways = 1;
};

// glibc's largest dynamic mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit), where a
// micro-run's worker settles malloc (worker.cpp): a block at least this large is mapped afresh,
// and its pages faulted in, by every run.
constexpr std::int64_t settled_mmap_threshold_bytes = std::int64_t{32} << 20;

// The timing discipline of micro-runs: warm-up (a run per operand set, and one more, so that
// every output the rotation allocates has been touched once), then at least 3 repetitions and
// 50 ms, at most 20 (medians of 3 are what a budget of minutes affords for the slowest layers);
// whole-network runs: 1 warm-up and 3 repetitions.
probe::TimingOptions layer_timing(int operand_sets);
probe::TimingOptions network_timing();

// Seconds one measurement is expected to take, set-up and warm-up included (with as many operand
// sets as the runner will rotate through); one run of it alone, as a training step sums it.
double estimate_run_seconds(const PlannedMeasurement& measurement, const SpeedModel& speed,
                            const std::vector<workloads::Network>& networks);
double estimate_seconds(const PlannedMeasurement& measurement, const SpeedModel& speed,
                        const std::vector<workloads::Network>& networks);
// What each run adds faulting in the outputs glibc maps afresh (settled_mmap_threshold_bytes): part
// of what the measurement takes and of its median (estimate_seconds counts it), but a training step
// sums far less of it (docs/results.md, "First-touch in the plan"): not in estimate_run_seconds.
double estimate_run_fault_seconds(const PlannedMeasurement& measurement, const SpeedModel& speed,
                                  const std::vector<workloads::Network>& networks);

// What a training process's first step adds faulting in its memory at `setting` (one process's
// peak, workloads::NetworkCost::training_memory_bytes, every page first touched): a trainer's
// warm-up step pays it on top of a steady step, and on a VM it can cost more than the step itself.
double estimate_first_step_fault_seconds(const workloads::Network& network, std::int64_t batch, const Setting& setting,
                                         const SpeedModel& speed);

struct PlanRequest {
  std::vector<workloads::Network> networks;
  std::vector<workloads::LayerSpec> extra_layers;  // measured besides the networks' layers
  std::vector<workloads::Pass> passes{workloads::Pass::forward, workloads::Pass::backward_data,
                                      workloads::Pass::backward_weights};
  std::vector<std::string> backends;
  std::vector<std::int64_t> batches;
  std::vector<Setting> settings;  // base first (grid_settings)
  // What the GPU backends run each pass in, each in turn (the CPU backends: fp32 contiguous).
  std::vector<MicroPrecision> precisions{MicroPrecision{}};
  double budget_seconds = 120;
  bool whole_network_runs = true;
};

struct Plan {
  std::vector<PlannedMeasurement> measurements;  // in execution order (see order_for_running)
  std::size_t grid_size = 0;                     // measurements of the whole grid
  double estimated_seconds = 0;                  // of the kept ones
  double grid_estimated_seconds = 0;
  int distinct_layers = 0;
  bool sampled = false;  // the budget left part of the grid out
};

Plan make_plan(const PlanRequest& request, const SpeedModel& speed);

// Priority 1 above: every distinct layer at the base setting and the cliff extremes, what the
// model needs once before anything else; the rest (priorities 2-4) only refines it.
bool first_priority(const PlannedMeasurement& measurement);

// Keeps the lowest-priority-number measurements whose `seconds` fit in `budget_seconds`
// (scanning in priority order, skipping any that would overflow), in priority order.
std::vector<PlannedMeasurement> select_within_budget(std::vector<PlannedMeasurement> candidates, double budget_seconds,
                                                     const std::function<double(const PlannedMeasurement&)>& seconds);

// Execution order: the class extremes where another kernel runs (1. above), then the base-setting
// layers (by backend and batch), then whole-network runs, then each other setting (by backend,
// setting, batch), each group in priority order; one group runs in one set of worker processes.
void order_for_running(std::vector<PlannedMeasurement>& measurements, const std::vector<Setting>& settings);

// The text the command prints before it starts.
std::string describe_plan(const Plan& plan, const PlanRequest& request);

}  // namespace dnntune::calibrate
