// calibrate/corunning.hpp — the parent's side of measuring in worker processes (worker.hpp):
// k real processes of the same binary, each pinned to its own cores before it starts, timing
// the same work at the same moment. Memory-bandwidth and cache contention between processes on
// one node — what decides between one process with many threads and many processes with few —
// exists only when they really run together, so they are released together (a "go" to each
// after all have prepared) and keep loading the node until the last one has finished timing.
// Each keeps the CPU set it reported from inside (sched_getaffinity) and its timed interval.
//
// Running every kernel in a worker also isolates crashes: a kernel that kills its process
// fails that one measurement; the group is restarted for the next.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "calibrate/line_channel.hpp"
#include "calibrate/naive_reference.hpp"
#include "calibrate/plan.hpp"
#include "records/measurement.hpp"

namespace dnntune::calibrate {

// The CPU sets of a setting's processes, given the usable cores (each core's OS CPUs, in
// topology order): process i gets cores [i*c, (i+1)*c) for c cores per process, one CPU of each
// core, or all of its SMT siblings. Fails when the node has too few cores or SMT siblings.
Expected<std::vector<std::vector<int>>> cpu_sets_for(const Setting& setting,
                                                     const std::vector<std::vector<int>>& cores);

// One measurement for the workers: a layer pass, or a whole network's training step.
struct WorkItem {
  std::string descriptor;  // layer
  workloads::Pass pass = workloads::Pass::forward;
  std::string network;  // whole network (a name or a file, as --model takes)
  std::int64_t batch = 1;
  int operand_sets = 1;
  std::string precision = "fp32";  // what a GPU backend runs it in (plan.hpp's MicroPrecision)
  std::string memory_format = "contiguous";
};

struct ProcessOutcome {
  std::vector<int> cpus;        // as the worker reported them
  std::vector<double> samples;  // seconds per timed repetition
  double start = 0, end = 0;    // CLOCK_MONOTONIC seconds bounding the timed repetitions
};

struct GroupOutcome {
  records::MeasurementStatus status = records::MeasurementStatus::ok;
  std::string reason;
  std::vector<ProcessOutcome> processes;  // by rank; samples only when ok
  bool workers_lost = false;              // a worker died or was killed: start a new group
  bool timed_out = false;                 // killed for running past the time limit
};

class WorkerGroup {
 public:
  struct Options {
    std::string executable;  // a dnntune binary (it runs `calibrate --worker`)
    std::string backend;
    Setting setting;
    std::vector<std::vector<int>> cpu_sets;  // one per process
  };

  // Starts one worker per CPU set and waits for each to report in.
  static Expected<std::unique_ptr<WorkerGroup>> start(const Options& options);
  ~WorkerGroup();  // kills and reaps the workers
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;

  const std::string& backend_version() const { return backend_version_; }
  // The CPU set each worker reported, by rank.
  const std::vector<std::vector<int>>& cpu_sets() const { return reported_cpu_sets_; }
  std::vector<pid_t> pids() const;

  // The numerical check, in the first worker.
  Expected<std::vector<CheckResult>> check(double timeout_seconds);
  // Measures `item` on every worker at once. Past `timeout_seconds` the workers are killed and
  // the measurement fails.
  GroupOutcome measure(const WorkItem& item, double timeout_seconds);

 private:
  struct Worker {
    pid_t pid = -1;
    LineChannel channel;
    bool reaped = false;
    std::string exit_description;
  };
  WorkerGroup() = default;
  void kill_all();
  // Why worker `rank` is gone ("killed by signal 11 (Segmentation fault)").
  std::string describe_loss(int rank);

  std::vector<Worker> workers_;
  std::string backend_version_;
  std::vector<std::vector<int>> reported_cpu_sets_;
};

}  // namespace dnntune::calibrate
