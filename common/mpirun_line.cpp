// common/mpirun_line.cpp — see mpirun_line.hpp.
#include "common/mpirun_line.hpp"

#include <algorithm>

namespace dnntune {

std::string open_mpi_map_by(int ranks_per_node, int cpus_per_rank, int packages, int cpus_per_package) {
  packages = std::max(1, packages);
  const int per_socket = (ranks_per_node + packages - 1) / packages;
  const std::string ranks = per_socket * cpus_per_rank <= std::max(1, cpus_per_package)
                                ? std::to_string(per_socket) + ":socket"
                                : std::to_string(ranks_per_node) + ":node";
  return "ppr:" + ranks + ":PE=" + std::to_string(cpus_per_rank);
}

MpirunLine mpirun_line(const MpirunRequest& request) {
  const int cores = std::max(1, request.cores);
  const int cpus = std::max(cores, request.pus);
  const int ppn = request.ranks_per_node;
  const int needed = ppn * request.cpus_per_rank;

  MpirunLine line;
  line.argv = {"mpirun", "-np", std::to_string(ppn * request.nodes)};
  if (!request.hostfile.empty()) line.argv.insert(line.argv.end(), {"--hostfile", request.hostfile});
  const int cpus_per_socket =
      std::max(1, request.cores_per_package) * (needed <= cores ? 1 : std::max(1, request.pus_per_core));
  const std::string map_by = open_mpi_map_by(ppn, request.cpus_per_rank, request.packages, cpus_per_socket);
  const std::string shape = std::to_string(ppn) + " processes x " + std::to_string(request.cpus_per_rank) + " threads";
  bool oversubscribe = false;
  if (needed <= cores) {
    line.argv.insert(line.argv.end(), {"--map-by", map_by, "--bind-to", "core"});
    oversubscribe = ppn > cores;
  } else if (needed <= cpus) {
    // Open MPI counts SMT siblings as the CPUs to hand out only when told to.
    line.argv.insert(line.argv.end(), {"--use-hwthread-cpus", "--map-by", map_by, "--bind-to", "hwthread"});
    line.notes.push_back(shape + " exceed the node's " + std::to_string(cores) +
                         " cores: threads share cores through SMT siblings");
  } else {
    line.argv.insert(line.argv.end(), {"--bind-to", "none"});
    oversubscribe = true;
    line.notes.push_back(shape + " exceed the node's " + std::to_string(cpus) +
                         " CPUs: ranks are left unbound and time-share them");
  }
  if (request.report_bindings) line.argv.push_back("--report-bindings");
  if (oversubscribe) line.argv.push_back("--oversubscribe");
  if (request.as_root) line.argv.push_back("--allow-run-as-root");
  for (const auto& [name, value] : request.environment) line.argv.insert(line.argv.end(), {"-x", name + "=" + value});
  return line;
}

}  // namespace dnntune
