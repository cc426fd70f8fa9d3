// probe/train/launch.hpp — composing the `mpirun` line that gives every rank the cores its
// threads need, and running it. The default Open MPI binding (one core per rank) starves a
// multi-threaded rank; the line composed here maps N ranks per node with M cores each:
//
//   mpirun -np N --map-by ppr:N:socket:PE=M --bind-to core -x OMP_NUM_THREADS=M PROGRAM...
//
// (ppr:ceil(N/S):socket on S sockets when that many ranks fit in a socket, so no rank straddles
// sockets, ppr:N:node otherwise; SMT siblings as
// cores when the cores alone are too few; --bind-to none --oversubscribe when even the CPUs
// are too few, with a note saying the ranks will time-share them).
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"
#include "probe/machine_profile.hpp"

namespace dnntune::probe::train {

struct LaunchRequest {
  int processes_per_node = 1;
  int threads = 1;                   // per process
  int nodes = 1;
  std::string hostfile;              // mpirun --hostfile, for several nodes outside a scheduler
  std::vector<std::string> program;  // what every rank runs: the program and its arguments
};

struct LaunchPlan {
  std::vector<std::string> argv;     // mpirun and its arguments, then the program
  std::vector<std::string> notes;    // what the user should know (time-sharing, SMT siblings)
};

// `node` is the topology of one node (all nodes are taken to be alike); `as_root` adds
// --allow-run-as-root, which Open MPI demands of root.
Expected<LaunchPlan> plan_mpirun_launch(const LaunchRequest& request, const Topology& node, bool as_root);

// Runs argv[0] (searched in PATH) with the rest, waits, and returns its exit code (128 + the
// signal when a signal ended it).
Expected<int> run_and_wait(const std::vector<std::string>& argv);

}  // namespace dnntune::probe::train
