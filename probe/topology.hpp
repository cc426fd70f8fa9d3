// probe/topology.hpp — characterise a node's topology with hwloc: packages, NUMA nodes, cores,
// SMT siblings (OS numbering read from hwloc, never assumed), caches, memory; and, for this
// machine, the CPUs this process may use. Performance figures are filled in elsewhere
// (peak_kernels.hpp); a profile made from an XML file has none.
#pragma once

#include <string>

#include "common/expected.hpp"
#include "records/machine_profile.hpp"

namespace dnntune::probe {

// This machine as this process sees it: topology, CPU model and ISA, and the binding.
Expected<records::MachineProfile> describe_this_machine();

// Another machine from an hwloc XML export (`lstopo --of xml`, or a synthetic topology written
// with `lstopo -i "pack:2 core:28 pu:2" --of xml`). No binding, no measurements.
Expected<records::MachineProfile> describe_topology_file(const std::string& xml_path);

// The binding checks on their own, for a process that already has a profile of its node
// (trainer ranks report their binding through this): allowed PUs, OpenMP threads, warnings.
records::Binding describe_this_process_binding(const records::Topology& topology);

}  // namespace dnntune::probe
