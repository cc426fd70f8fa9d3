// examples/describe_topology.cpp — using the probe library from C++: describe a compute node
// from an hwloc XML export (made on that node with `lstopo --of xml node.xml`) and print what
// decides a training configuration: sockets, cores per socket, SMT siblings, NUMA nodes.
//
//   describe_topology node.xml
#include <iostream>

#include "probe/topology.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: describe_topology TOPOLOGY.xml\n";
    return 2;
  }
  const auto profile = dnntune::probe::describe_topology_file(argv[1]);
  if (!profile) {
    std::cerr << "error: " << profile.error().message << "\n";
    return 2;
  }
  const auto& topology = profile->topology;
  std::cout << profile->name << ": " << topology.packages << " sockets x " << topology.cores_per_package << " cores x "
            << topology.pus_per_core << " SMT, " << topology.numa_nodes << " NUMA nodes\n";
  for (std::size_t core = 0; core < topology.core_list.size(); ++core) {
    std::cout << "core " << core << " (socket " << topology.core_list[core].package << "): CPUs";
    for (int pu : topology.core_list[core].pus) std::cout << " " << pu;
    std::cout << "\n";
  }
  return 0;
}
