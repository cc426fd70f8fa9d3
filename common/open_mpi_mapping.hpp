// common/open_mpi_mapping.hpp — the one rule for Open MPI's --map-by value, shared by the
// launch lines the tuner recommends and the one `train --launch` runs (so --verify and
// validate train the placement that is recommended, and the cost model assumes).
#pragma once

#include <algorithm>
#include <string>

namespace dnntune {

// ppr:ceil(N/S):socket:PE=M when that many ranks of M CPUs fit in one socket's CPUs (no rank
// straddles sockets; the last socket may hold fewer), ppr:N:node:PE=M otherwise (ranks packed
// over the node in order; a rank wider than a socket takes whole sockets). PE=M gives each rank
// M consecutive CPUs to bind its threads to.
inline std::string open_mpi_map_by(int ranks_per_node, int cpus_per_rank, int packages, int cpus_per_package) {
  packages = std::max(1, packages);
  const int per_socket = (ranks_per_node + packages - 1) / packages;
  const std::string ranks = per_socket * cpus_per_rank <= std::max(1, cpus_per_package)
                                ? std::to_string(per_socket) + ":socket"
                                : std::to_string(ranks_per_node) + ":node";
  return "ppr:" + ranks + ":PE=" + std::to_string(cpus_per_rank);
}

}  // namespace dnntune
