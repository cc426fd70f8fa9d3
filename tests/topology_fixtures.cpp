// tests/topology_fixtures.cpp — see topology_fixtures.hpp.
#include "tests/topology_fixtures.hpp"
#include "tests/temporary_files.hpp"

#include <fstream>
#include <stdexcept>

#include <hwloc.h>

namespace dnntune::test {

std::string write_synthetic_topology(const std::string& description) {
  static int counter = 0;
  static const std::string folder = temporary_directory("topology");
  const std::string path = folder + "/synthetic-" + std::to_string(counter++) + ".xml";
  hwloc_topology_t topology = nullptr;
  hwloc_topology_init(&topology);
  if (hwloc_topology_set_synthetic(topology, description.c_str()) != 0 || hwloc_topology_load(topology) != 0 ||
      hwloc_topology_export_xml(topology, path.c_str(), 0) != 0) {
    hwloc_topology_destroy(topology);
    throw std::runtime_error("cannot write synthetic topology " + description);
  }
  hwloc_topology_destroy(topology);
  return path;
}

std::string recorded_topology(const std::string& file_name) {
  const std::string path = std::string(DNNTUNE_SOURCE_DIR) + "/../shared/topologies/" + file_name;
  return std::ifstream(path).good() ? path : "";
}

}  // namespace dnntune::test
