// calibrate/runner.hpp — `dnntune calibrate` as a library: from a request (networks,
// backends, batches, budget, directory) to records in DIR/layers.jsonl, in two steps so the
// plan can be shown before anything is measured.
//
// DIR holds machine.json (the probe's profile of this machine, measured once and reused: the
// plan's estimates and the report's peak come from it) and layers.jsonl (Measurement records,
// records/measurement.hpp, appended and flushed one by one). Layer records have network "" (a
// layer shared by several networks is measured once; its descriptor says what it is) and pass
// forward / backward_data / backward_weights; whole-network records have kind network, the
// network's name and pass "forward_backward". threads, smt and processes give the setting;
// cpu_sets the CPUs each co-running process reported having; the timing pools the repetitions of
// all co-running processes (each one's own median is within the spread). A measurement the
// budget left out is recorded as skipped; --resume measures it (and whatever an interrupted run
// did not reach) and nothing that already has an ok, unimplemented or failed record.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "calibrate/plan.hpp"
#include "records/machine_profile.hpp"
#include "records/measurement.hpp"

namespace dnntune::calibrate {

constexpr const char* default_calibration_directory = "dnntune-calibration";
constexpr const char* whole_network_pass = "forward_backward";

struct CalibrationRequest {
  std::vector<std::string> models;    // built-in names or network files
  std::vector<std::string> layers;    // descriptors to measure besides the models' layers
  std::vector<std::string> backends;  // names, or "all" for every available backend
  std::vector<std::int64_t> batches;  // per process
  // What the GPU backends run each pass in (--precision); the CPU backends run fp32 contiguous.
  // Empty: PyTorch's default on this GPU (tf32 from compute capability 8.0 on, else fp32).
  std::vector<MicroPrecision> precisions;
  std::vector<std::string> passes;  // restricts passes (forward_backward: whole networks); empty: all
  std::vector<int> threads;         // restrict the settings (see settings_for); empty: the grid
  std::vector<int> processes;
  std::optional<bool> smt;
  double budget_seconds = 120;    // for the measurements; the probe is not counted
  double budget_cap_seconds = 0;  // > budget: extend the budget up to this for the whole grid
  std::string directory = default_calibration_directory;
  bool dry_run = false;   // plan only: nothing is created, probed or measured
  int anchor_warmup = 2;  // the anchors' untimed and timed steps (run_anchors)
  int anchor_iterations = 3;
  int allocator_anchor_warmup = 2;      // the untimed and timed steps of the anchors under the other
  int allocator_anchor_iterations = 3;  // allocators
  // The anchors under the other allocator variants (glibc-tuned first, then jemalloc and tcmalloc
  // when installed): the next is skipped when it would take the time spent on them past this.
  double allocator_anchor_budget_seconds = 120;
  // The variants anchored besides the default, in order; empty: every installed one
  // (allocator_variants_to_anchor). Given by a plan that kept them (pipeline/first_run_plan.hpp),
  // the first is trained whatever the allocator budget says: the allocator is chosen from a
  // measurement or never, and glibc-tuned is the reference the others are fitted against.
  std::vector<std::string> allocator_variants;
  // Who trains the anchors under the other allocators (records::kCppTrainer or kPythonTrainer). A
  // run of run_anchors(other_allocators) by PyTorch from Python trains glibc's defaults at the base
  // setting by it too, first, so that each variant is compared with a run of the same trainer
  // (model/allocation.hpp pairs the runs of one trainer): a first run's variants decide the
  // allocator as the job runs it (pipeline/first_run.cpp).
  std::string allocator_anchor_runner = records::kCppTrainer;
  // > 0: the default allocator's anchors stop their timed steps there (train --time-limit), so that
  // a step far slower than estimated cannot eat a first run's budget.
  double anchor_time_limit_seconds = 0;
  // Settings anchored besides the base one, under the default allocator (calibrate
  // --anchor-settings 1x1,2x1): to anchor every setting a benchmark compares.
  std::vector<Setting> anchor_settings;
  // The allocator the micro-runs run under (probe/allocators.hpp); the caller has started this
  // process under it (pipeline::run_under_allocator), and the workers inherit it. "default": glibc's,
  // settled as after a training step (calibrate/worker.cpp). Fits use default-allocator records.
  std::string allocator = "default";
  bool resume = false;
  std::string executable;  // the dnntune binary workers run (`calibrate --worker`)
};

// A calibration run prepared: everything decided before measuring (the request, the profiled
// machine, its usable cores and the plan). Not model::Calibration, the fitted model.
struct PreparedCalibration {
  CalibrationRequest request;
  records::MachineProfile machine;
  std::string fingerprint;
  std::vector<std::vector<int>> usable_cores;  // each usable core's allowed OS CPUs
  SpeedModel speed;  // what the plan's estimates assume of this machine, the operand sets' cache too
  PlanRequest plan_request;
  Plan plan;                         // what is left to measure (resumed work removed)
  std::size_t already_recorded = 0;  // planned measurements DIR already has
  double started_at = 0;             // probe::now_seconds() after the probe: the budget's start
};

// The last-level cache a micro-run's cold operand sets must span (twice over,
// operand_sets_for_cold_cache): each instance at most what its cores could plausibly have (never a
// hypervisor's report of its host's whole cache to each vCPU), and capped so that the sets of all
// `workers` stay within a quarter of the spare memory and each worker's within about 512 MiB (on a
// real node with more L3 than 256 MiB, operands then stay partly warm).
std::int64_t last_level_cache_bytes(const records::MachineProfile& profile, int workers);

// Checks the request (unknown network, backend or pass, batch < 1, a setting this machine
// cannot run, DIR of another machine, DIR already holding records without --resume: bad_input),
// creates DIR, probes the machine into DIR/machine.json unless it is there, and plans. A dry run
// creates and probes nothing: it plans with DIR/machine.json's speeds if there is one, else with
// default speeds.
// `progress` gets a line per step that takes time.
Expected<PreparedCalibration> prepare_calibration(const CalibrationRequest& request,
                                                  const std::function<void(const std::string&)>& progress);

struct RunHooks {
  std::function<void(const std::string&)> progress;                // a line per measurement, with an ETA
  std::function<void(const std::vector<pid_t>&)> workers_started;  // each new set of workers
};

struct CalibrationSummary {
  int ok = 0, unimplemented = 0, failed = 0, skipped = 0;
  std::size_t already_recorded = 0;
  double seconds = 0;                      // since preparing began
  std::vector<std::string> check_lines;    // the numerical check, a line per backend
  std::vector<std::string> skipped_lines;  // what the budget left out, a line per backend and setting
  std::string records_path;
};

// Runs the numerical check of each backend, then the plan, appending a record per measurement.
// A measurement that fails (an exception, a crashed or killed worker) is recorded and the run
// goes on. Fails only when DIR cannot be written.
Expected<CalibrationSummary> run_calibration(const PreparedCalibration& calibration, const RunHooks& hooks);

// The anchors (train/anchor.hpp): trains every network of the request at every batch for
// real for a few steps in the plan's base setting, its records appended to DIR/network.jsonl,
// except what that file already has for this machine. Returns how many it trained; fails when a
// training job fails.
// Then each of request.anchor_settings, under the default allocator only.
// `kinds` picks a part: a first run trains the default allocator's anchors before its fit and
// the other allocators' last, with what is left of its time (pipeline/first_run.cpp),
// because predictions under the default allocator never use the others' anchors.
enum class AnchorKinds { all, default_allocator, other_allocators };
// The allocator variants installed here besides glibc's default, glibc-tuned (the reference the
// others are fitted against) first: what a calibration anchors under, in that order.
std::vector<std::string> allocator_variants_to_anchor();
Expected<int> run_anchors(const PreparedCalibration& calibration,
                          const std::function<void(const std::string&)>& progress,
                          AnchorKinds kinds = AnchorKinds::all);

// The base anchor of each network and batch run again, each run a process of its own: once more
// by the C++ trainer, then once by PyTorch from Python (train --runner python: torchvision's
// network, what users run; when the Python has torch and torchvision and torchvision builds the
// network), while each, estimated from the base anchor's steps, fits what is left of
// `budget_seconds`. The fit pools the runs of a setting (model/anchors.hpp: the median of their
// medians, their spread in the band). Why: a process's step time is bimodal under glibc's
// defaults, so one run may be a slow process, and the two trainers' steps differ by network
// (docs/results.md, "Anchors").
// Resumable: runs recorded already count. Returns how many it trained; fails when a job fails.
Expected<int> run_repeated_base_anchors(const PreparedCalibration& calibration,
                                        const std::function<void(const std::string&)>& progress, double budget_seconds);

// The recorded runs (kind network, pass iteration, ok, one node) of `network` at `batch` and
// `setting` under `allocator` among `records` of the machine `fingerprint`, in the records' order
// (the order they were trained in: the file is appended to).
std::vector<const records::Measurement*> recorded_anchor_runs(const std::vector<records::Measurement>& records,
                                                              const std::string& fingerprint,
                                                              const std::string& network, std::int64_t batch,
                                                              const Setting& setting, const std::string& allocator);
// The first of them, or null: what makes anchoring resumable (a recorded run is never trained again).
const records::Measurement* recorded_anchor(const std::vector<records::Measurement>& records,
                                            const std::string& fingerprint, const std::string& network,
                                            std::int64_t batch, const Setting& setting, const std::string& allocator);

// "1x1,2x1": processes x threads per process, SMT off (the trainer binds one thread per core),
// comma-separated; bad_input, one line, for anything else (the text of --anchor-settings).
Expected<std::vector<Setting>> parse_anchor_settings(const std::string& text);

// The cores this process may use on the profiled machine, each as its allowed OS CPUs.
std::vector<std::vector<int>> usable_cores(const records::MachineProfile& profile);

// The record a planned measurement will have, before it is made (for resume keys and commands),
// under `allocator` (CalibrationRequest::allocator).
records::Measurement planned_record(const PlannedMeasurement& measurement, const std::string& fingerprint,
                                    const std::string& allocator);

// The one builder of the `dnntune calibrate` line that measures just this record again (the
// record's `command`, for people: nothing reads it back).
std::vector<std::string> reproducing_argv(const PlannedMeasurement& measurement, const std::string& allocator);
std::string reproducing_command(const PlannedMeasurement& measurement, const std::string& allocator);

}  // namespace dnntune::calibrate
