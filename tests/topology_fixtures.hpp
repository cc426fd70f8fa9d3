// tests/topology_fixtures.hpp — hwloc XML fixtures for tests: synthetic topologies written on
// the fly (exactly what `lstopo -i "DESCRIPTION" --of xml` writes), and the recorded real
// machines of ../shared/topologies/ when that folder is present.
#pragma once

#include <string>

namespace dnntune::test {

// Writes the synthetic topology `description` (hwloc syntax, e.g. "pack:2 core:28 pu:2" or
// with OS numbering "pack:2 core:2 pu:2(indexes=0,4,1,5,2,6,3,7)") as XML; returns the path.
std::string write_synthetic_topology(const std::string& description);

// Path of a recorded topology in ../shared/topologies/, or "" when that folder is absent.
std::string recorded_topology(const std::string& file_name);

}  // namespace dnntune::test
