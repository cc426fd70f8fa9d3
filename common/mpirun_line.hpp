// common/mpirun_line.hpp — the one builder of Open MPI launch lines, shared by the lines the
// tuner recommends and the one `train --launch` runs (so --verify and validate train the
// placement that is recommended, and the cost model assumes). The default Open MPI binding
// (one core per rank) starves a multi-threaded rank; the line built here gives each rank the
// CPUs its threads need:
//
//   mpirun -np N --map-by ppr:N:socket:PE=M --bind-to core [-x NAME=VALUE ...]
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace dnntune {

// ppr:ceil(N/S):socket:PE=M when that many ranks of M CPUs fit in one socket's CPUs (no rank
// straddles sockets; the last socket may hold fewer), ppr:N:node:PE=M otherwise (ranks packed
// over the node in order; a rank wider than a socket takes whole sockets). PE=M gives each rank
// M consecutive CPUs to bind its threads to.
std::string open_mpi_map_by(int ranks_per_node, int cpus_per_rank, int packages, int cpus_per_package);

// One node's shape (all nodes are taken to be alike) and what is launched on it.
struct MpirunRequest {
  int ranks_per_node = 1;
  int nodes = 1;
  int cpus_per_rank = 1;  // the CPUs each rank's threads are bound to
  int cores = 1, pus = 1, packages = 1, cores_per_package = 1, pus_per_core = 1;
  std::string hostfile;  // --hostfile, for several nodes outside a scheduler
  bool report_bindings = false;
  bool as_root = false;                                          // --allow-run-as-root, which Open MPI demands of root
  std::vector<std::pair<std::string, std::string>> environment;  // -x NAME=VALUE, in order
};

struct MpirunLine {
  std::vector<std::string> argv;   // mpirun and its arguments, without the program
  std::vector<std::string> notes;  // what the user should know (SMT siblings, time-sharing)
};

// Cores first; SMT siblings count as CPUs to hand out only when the cores alone are too few
// (--use-hwthread-cpus --bind-to hwthread); when even the CPUs are too few the ranks are left
// unbound and oversubscribed, with a note saying they will time-share them.
MpirunLine mpirun_line(const MpirunRequest& request);

}  // namespace dnntune
