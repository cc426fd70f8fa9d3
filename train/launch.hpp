// train/launch.hpp — the `mpirun` line `train --launch` runs (built by common/mpirun_line, the
// same builder as the tuner's recommended lines) for N ranks per node with M threads each, and
// running it:
//
//   mpirun -np N --map-by ppr:N:socket:PE=M --bind-to core -x OMP_NUM_THREADS=M PROGRAM...
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"
#include "records/machine_profile.hpp"

namespace dnntune::train {

struct LaunchRequest {
  int processes_per_node = 1;
  int threads = 1;  // per process
  int nodes = 1;
  std::string hostfile;              // mpirun --hostfile, for several nodes outside a scheduler
  std::vector<std::string> program;  // what every rank runs: the program and its arguments
};

struct LaunchPlan {
  std::vector<std::string> argv;   // mpirun and its arguments, then the program
  std::vector<std::string> notes;  // what the user should know (time-sharing, SMT siblings)
};

// `node` is the topology of one node (all nodes are taken to be alike); `as_root` adds
// --allow-run-as-root, which Open MPI demands of root.
Expected<LaunchPlan> plan_mpirun_launch(const LaunchRequest& request, const records::Topology& node, bool as_root);

// Runs argv[0] (searched in PATH) with the rest, waits, and returns its exit code (128 + the
// signal when a signal ended it).
Expected<int> run_and_wait(const std::vector<std::string>& argv);

}  // namespace dnntune::train
