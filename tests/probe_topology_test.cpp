// tests/probe_topology_test.cpp — topology parsing (probe/topology.hpp) on synthetic and
// recorded hwloc XMLs: counts, SMT sibling numbering, NUMA layout, offline CPUs, bad files.
#include <catch2/catch.hpp>

#include <fstream>

#include "probe/topology.hpp"
#include "tests/temporary_files.hpp"
#include "tests/topology_fixtures.hpp"

using namespace dnntune;
using dnntune::test::recorded_topology;
using dnntune::test::write_synthetic_topology;

TEST_CASE("a 2-socket 28-core SMT node from a synthetic XML") {
  const auto profile = probe::describe_topology_file(write_synthetic_topology("pack:2 core:28 pu:2"));
  REQUIRE(profile);
  const auto& topology = profile->topology;
  CHECK(profile->origin == records::ProfileOrigin::topology_file);
  CHECK(topology.packages == 2);
  CHECK(topology.cores == 56);
  CHECK(topology.pus == 112);
  CHECK(topology.cores_per_package == 28);
  CHECK(topology.pus_per_core == 2);
  REQUIRE(topology.core_list.size() == 56);
  // hwloc's synthetic numbering puts the siblings of core k at 2k and 2k+1.
  for (int core = 0; core < 56; ++core) {
    CHECK(topology.core_list[core].pus == std::vector<int>{2 * core, 2 * core + 1});
    CHECK(topology.core_list[core].package == core / 28);
  }
  CHECK_FALSE(profile->binding);
  CHECK(profile->performance.fma_scaling.empty());
  CHECK_FALSE(profile->performance.peak_fp32_gflops_per_core);
}

TEST_CASE("siblings numbered N apart are read from the XML, not assumed") {
  // Linux on most Intel servers: core k has CPUs k and k+8 on this 2x4-core machine.
  const auto profile = probe::describe_topology_file(
      write_synthetic_topology("pack:2 core:4 pu:2(indexes=0,8,1,9,2,10,3,11,4,12,5,13,6,14,7,15)"));
  REQUIRE(profile);
  REQUIRE(profile->topology.core_list.size() == 8);
  for (int core = 0; core < 8; ++core) CHECK(profile->topology.core_list[core].pus == std::vector<int>{core, core + 8});
}

TEST_CASE("four NUMA nodes per socket, like EPYC 7551") {
  const auto profile = probe::describe_topology_file(write_synthetic_topology("pack:2 numa:4 core:8 pu:2"));
  REQUIRE(profile);
  const auto& topology = profile->topology;
  CHECK(topology.packages == 2);
  CHECK(topology.numa_nodes == 8);
  CHECK(topology.cores == 64);
  REQUIRE(topology.numa_list.size() == 8);
  for (const auto& node : topology.numa_list) {
    CHECK(node.cores == 8);
    CHECK(node.package == node.os_index / 4);
  }
  CHECK(topology.core_list[9].numa_node == 1);   // core 9 lives in the second die of socket 0
  CHECK(topology.core_list[40].numa_node == 5);  // core 40: socket 1, its second die
}

TEST_CASE("caches and their sharing") {
  const auto profile = probe::describe_topology_file(write_synthetic_topology("pack:1 l3:1 l2:4 l1d:1 core:1 pu:2"));
  REQUIRE(profile);
  const auto& caches = profile->topology.caches;
  REQUIRE(caches.size() == 3);
  CHECK(caches[0].level == 1);
  CHECK(caches[0].instances == 4);
  CHECK(caches[0].pus_sharing == 2);
  CHECK(caches[2].level == 3);
  CHECK(caches[2].instances == 1);
  CHECK(caches[2].pus_sharing == 8);
}

TEST_CASE("recorded real machines (../shared/topologies)") {
  SECTION("KNL: SMT 4, 8 NUMA nodes (DDR + MCDRAM) in one package") {
    const auto path = recorded_topology("64intel64-fakeKNL-SNC4-hybrid.xml");
    if (path.empty()) return;
    const auto profile = probe::describe_topology_file(path);
    REQUIRE(profile);
    CHECK(profile->topology.packages == 1);
    CHECK(profile->topology.numa_nodes == 8);
    CHECK(profile->topology.cores == 16);
    CHECK(profile->topology.pus == 64);
    CHECK(profile->topology.pus_per_core == 4);
  }
  SECTION("offline PUs are not counted as usable") {
    const auto path = recorded_topology("16em64t-4s2c2t-offlines.xml");
    if (path.empty()) return;
    const auto profile = probe::describe_topology_file(path);
    REQUIRE(profile);
    CHECK(profile->topology.packages == 4);
    CHECK(profile->topology.cores == 6);
    CHECK(profile->topology.pus == 7);
    CHECK(profile->topology.offline_pus > 0);
  }
  SECTION("Xeon E5-2650: siblings numbered 16 apart, 2 NUMA nodes") {
    const auto path = recorded_topology("32em64t-2n8c2t-pci-normalio.xml");
    if (path.empty()) return;
    const auto profile = probe::describe_topology_file(path);
    REQUIRE(profile);
    CHECK(profile->topology.packages == 2);
    CHECK(profile->topology.numa_nodes == 2);
    CHECK(profile->topology.cores == 16);
    CHECK(profile->topology.pus == 32);
    CHECK(profile->topology.core_list[0].pus == std::vector<int>{0, 16});
    CHECK(profile->cpu.model.find("E5-2650") != std::string::npos);
  }
  SECTION("16 packages without SMT, 4 NUMA nodes") {
    const auto path = recorded_topology("96em64t-4n4d3ca2co-pci.xml");
    if (path.empty()) return;
    const auto profile = probe::describe_topology_file(path);
    REQUIRE(profile);
    CHECK(profile->topology.packages == 16);
    CHECK(profile->topology.numa_nodes == 4);
    CHECK(profile->topology.cores == 96);
    CHECK(profile->topology.pus_per_core == 1);
  }
  SECTION("4 sockets of 2 cores with SMT 2") {
    const auto path = recorded_topology("16em64t-4s2c2t.xml");
    if (path.empty()) return;
    const auto profile = probe::describe_topology_file(path);
    REQUIRE(profile);
    CHECK(profile->topology.packages == 4);
    CHECK(profile->topology.numa_nodes == 1);
    CHECK(profile->topology.cores == 8);
    CHECK(profile->topology.pus == 16);
    CHECK(profile->topology.offline_pus == 0);
  }
  SECTION("2 NUMA nodes of 6 SMT cores, with PCI devices") {
    const auto path = recorded_topology("24em64t-2n6c2t-pci.xml");
    if (path.empty()) return;
    const auto profile = probe::describe_topology_file(path);
    REQUIRE(profile);
    CHECK(profile->topology.packages == 2);
    CHECK(profile->topology.numa_nodes == 2);
    CHECK(profile->topology.cores == 12);
    CHECK(profile->topology.pus == 24);
    CHECK(profile->topology.cores_per_package == 6);
  }
  SECTION("24 packages, 24 NUMA nodes, 384 PUs") {
    const auto path = recorded_topology("192em64t-24n8c2t.xml");
    if (path.empty()) return;
    const auto profile = probe::describe_topology_file(path);
    REQUIRE(profile);
    CHECK(profile->topology.packages == 24);
    CHECK(profile->topology.numa_nodes == 24);
    CHECK(profile->topology.cores == 192);
    CHECK(profile->topology.pus == 384);
  }
}

TEST_CASE("bad topology files are bad input naming the file") {
  SECTION("missing") {
    const auto profile = probe::describe_topology_file("/nonexistent/node.xml");
    REQUIRE_FALSE(profile);
    CHECK(profile.error().kind == ErrorKind::bad_input);
    CHECK(profile.error().message.find("/nonexistent/node.xml") != std::string::npos);
  }
  SECTION("garbled") {
    const std::string path = dnntune::test::temporary_directory("topology-test") + "/garbled.xml";
    std::ofstream(path) << "<?xml version=\"1.0\"?><topology><object type=\"Machine\"";
    const auto profile = probe::describe_topology_file(path);
    REQUIRE_FALSE(profile);
    CHECK(profile.error().message.find(path) != std::string::npos);
  }
  SECTION("not XML at all") {
    const std::string path = dnntune::test::temporary_directory("topology-test") + "/not-xml.xml";
    std::ofstream(path) << "{\"this\": \"is json\"}";
    REQUIRE_FALSE(probe::describe_topology_file(path));
  }
}

TEST_CASE("this machine: topology, binding and the bound-to-fewer-cores warning") {
  const auto profile = probe::describe_this_machine();
  REQUIRE(profile);
  CHECK(profile->origin == records::ProfileOrigin::probe);
  CHECK(profile->topology.cores >= 1);
  REQUIRE(profile->binding);
  CHECK_FALSE(profile->binding->allowed_pus.empty());
  CHECK(profile->binding->openmp_threads >= 1);
  CHECK_FALSE(profile->cpu.onednn_isa.empty());

  if (profile->binding->allowed_cores < 2) return;  // cannot bind to fewer cores than we have
  // Bind this thread to its first allowed CPU, as Open MPI does to each rank by default.
  cpu_set_t original, single;
  sched_getaffinity(0, sizeof original, &original);
  CPU_ZERO(&single);
  CPU_SET(profile->binding->allowed_pus.front(), &single);
  REQUIRE(sched_setaffinity(0, sizeof single, &single) == 0);
  const auto bound = probe::describe_this_process_binding(profile->topology);
  sched_setaffinity(0, sizeof original, &original);
  CHECK(bound.allowed_pus.size() == 1);
  CHECK(bound.allowed_cores == 1);
  REQUIRE_FALSE(bound.warnings.empty());
  CHECK(bound.warnings.front().find("bound to 1 of") != std::string::npos);
}
