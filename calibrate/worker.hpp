// calibrate/worker.hpp — the worker process of a calibration: `dnntune calibrate --worker`,
// started by the parent (corunning.hpp) already pinned to its CPU set. It keeps one backend at
// one thread count, and measures what the parent sends, one JSON message per line on file
// descriptor 3 (a socket; standard output is left to the libraries), answering on the same:
//
//   parent                                            worker
//                                                     {"event":"hello","cpus":[0],"threads":1,
//                                                      "backend_version":"libtorch 1.13.0"}
//   {"op":"check"}                                    {"event":"checked","results":[...]}
//   {"op":"prepare","descriptor":D,"pass":P,          {"event":"prepared","status":"ok"|
//    "batch":B,"operand_sets":N}                        "unimplemented"|"failed","reason":R}
//   {"op":"prepare","network":NAME,"batch":B}         (the same)
//   {"op":"go"}                                       {"event":"started"}  (warmed up, timing)
//   {"op":"all_started"}                              {"event":"timed","status":"ok"|"failed",
//                                                      "samples":[s...],"start":T0,"end":T1}
//   {"op":"stop"}                                     {"event":"stopped"}
//   {"op":"drop"}                                     (releases what was prepared; no answer)
//
// A worker times until it has its repetitions and has heard that all co-running workers have
// started timing, so their timed intervals intersect; co-running workers (keep_loading) then go
// on running their kernel untimed until "stop", so each one's timed interval lies wholly inside
// the others' load. start and end are
// CLOCK_MONOTONIC seconds, comparable across processes. A kernel that crashes kills only this
// process; the parent records it and starts a new worker.
#pragma once

#include <string>
#include <vector>

namespace dnntune::calibrate {

// The worker's end of its channel to the parent.
constexpr int worker_channel_fd = 3;

struct WorkerOptions {
  std::string backend;
  int threads = 1;
  bool keep_loading = false;  // co-running: load the CPUs until told to stop
};

// The one builder of a worker's command line: `EXECUTABLE calibrate --worker --backend B
// --threads T [--keep-loading]`, as the parent (corunning.cpp) starts it.
std::vector<std::string> calibrate_worker_argv(const std::string& executable, const WorkerOptions& options);

// Serves the parent on worker_channel_fd until it closes it; returns the exit status.
int run_worker(const WorkerOptions& options);

}  // namespace dnntune::calibrate
