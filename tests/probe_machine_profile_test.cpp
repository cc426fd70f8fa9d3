// tests/probe_machine_profile_test.cpp — MachineProfile JSON round trip, fingerprint, schema
// checks, and the built-in spec profiles of data/machines.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "data/builtin_machines.hpp"
#include "records/machine_profile.hpp"
#include "probe/topology.hpp"
#include "tests/temporary_files.hpp"
#include "tests/topology_fixtures.hpp"

using namespace dnntune;

TEST_CASE("JSON round trip prints back identically") {
  auto profile = probe::describe_topology_file(test::write_synthetic_topology("pack:2 numa:2 core:4 pu:2"));
  REQUIRE(profile);
  // Exercise every optional part too: binding and measured figures.
  profile->binding = records::Binding{{0, 1, 2}, 2, 3, "3", "openmpi", {"a warning"}};
  profile->performance.peak_fp32_gflops_per_core =
      records::Figure{101.5, records::Provenance::measured, 0.02, 7, "avx512"};
  profile->performance.fma_scaling.push_back({1, 1, false, 101.5, 0.02, 7});
  profile->performance.triad_scaling.push_back({2, 2, false, 30.25, 0.05, 7});
  const std::string text = records::to_json_text(*profile);
  const auto read_back = records::machine_profile_from_json_text(text, "round-trip");
  REQUIRE(read_back);
  CHECK(records::to_json_text(*read_back) == text);
  CHECK(records::fingerprint(*read_back) == records::fingerprint(*profile));
}

TEST_CASE("the fingerprint identifies hardware, not measurements") {
  const auto a = probe::describe_topology_file(test::write_synthetic_topology("pack:2 core:4 pu:2"));
  const auto b = probe::describe_topology_file(test::write_synthetic_topology("pack:2 core:4 pu:2"));
  const auto renumbered = probe::describe_topology_file(
      test::write_synthetic_topology("pack:2 core:4 pu:2(indexes=0,8,1,9,2,10,3,11,4,12,5,13,6,14,7,15)"));
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(renumbered);
  CHECK(records::fingerprint(*a) == records::fingerprint(*b));
  CHECK(records::fingerprint(*a).size() == 16);
  CHECK(records::fingerprint(*a) != records::fingerprint(*renumbered));
  auto measured = *a;
  measured.name = "another-name";
  measured.performance.peak_fp32_gflops_per_core = records::Figure{99, records::Provenance::measured, 0, 5, ""};
  CHECK(records::fingerprint(measured) == records::fingerprint(*a));
}

TEST_CASE("profiles of another schema, version or shape are refused with the file named") {
  const auto profile = data::builtin_machine("skylake-8180");
  REQUIRE(profile);
  std::string text = records::to_json_text(*profile);
  SECTION("another schema version") {
    const auto at = text.find("\"schema_version\": 1");
    REQUIRE(at != std::string::npos);
    text.replace(at, 19, "\"schema_version\": 7");
    const auto result = records::machine_profile_from_json_text(text, "old.json");
    REQUIRE_FALSE(result);
    CHECK(result.error().message.find("old.json") == 0);
    CHECK(result.error().message.find("version 7") != std::string::npos);
  }
  SECTION("another kind of file") {
    const auto result =
        records::machine_profile_from_json_text(R"({"schema": "dnntune.network", "schema_version": 1})", "net.json");
    REQUIRE_FALSE(result);
    CHECK(result.error().message.find("dnntune.network") != std::string::npos);
  }
  SECTION("garbled JSON") {
    const auto result = records::machine_profile_from_json_text(text.substr(0, text.size() / 2), "cut.json");
    REQUIRE_FALSE(result);
    CHECK(result.error().message.find("cut.json: not valid JSON") == 0);
  }
  SECTION("a member of the wrong type names the member") {
    const auto at = text.find("\"packages\": 2");
    REQUIRE(at != std::string::npos);
    text.replace(at, 13, "\"packages\": \"two\"");
    const auto result = records::machine_profile_from_json_text(text, "typo.json");
    REQUIRE_FALSE(result);
    CHECK(result.error().message.find("/topology/packages") != std::string::npos);
  }
  SECTION("an unknown provenance word") {
    const auto at = text.find("\"provenance\": \"spec\"");
    REQUIRE(at != std::string::npos);
    text.replace(at, 20, "\"provenance\": \"guessed\"");
    const auto result = records::machine_profile_from_json_text(text, "guess.json");
    REQUIRE_FALSE(result);
    CHECK(result.error().message.find("guessed") != std::string::npos);
  }
  SECTION("a missing file") {
    const auto result = records::read_machine_profile("/nonexistent/profile.json");
    REQUIRE_FALSE(result);
    CHECK(result.error().message.find("/nonexistent/profile.json: cannot open") == 0);
  }
}

TEST_CASE("built-in spec profiles") {
  const auto names = data::builtin_machine_names();
  const std::vector<std::string> expected = {"a100",
                                             "broadwell-e5-2680v4",
                                             "broadwell-e5-2690v4",
                                             "cascadelake-8280",
                                             "epyc-7551",
                                             "epyc-9654",
                                             "h100",
                                             "h200",
                                             "k80",
                                             "p100",
                                             "sapphirerapids-8480",
                                             "skylake-6148",
                                             "skylake-8160",
                                             "skylake-8170",
                                             "skylake-8180",
                                             "v100"};
  CHECK(names == expected);
  for (const auto& name : names) {
    INFO(name);
    const auto profile = data::builtin_machine(name);
    REQUIRE(profile);
    CHECK(profile->origin == records::ProfileOrigin::spec);
    CHECK(profile->name == name);
    CHECK_FALSE(profile->sources.empty());
    if (profile->kind == records::MachineKind::gpu) {
      REQUIRE(profile->gpu);
      CHECK(profile->gpu->fp32_tflops.provenance == records::Provenance::spec);
      CHECK(profile->gpu->fp32_tflops.value > 1);
      CHECK_FALSE(profile->gpu->architecture.empty());  // cuDNN's kernels and algorithms differ by it
    } else {
      REQUIRE(profile->performance.peak_fp32_gflops_per_core);
      CHECK(profile->performance.peak_fp32_gflops_per_core->provenance == records::Provenance::spec);
      CHECK(profile->topology.packages == 2);
      CHECK(profile->topology.pus == 2 * profile->topology.cores);
    }
  }
  // Skylake 8180: 28 cores/socket, 2.5 GHz x 64 FLOP/cycle = 160 GFLOP/s per core.
  const auto skylake = data::builtin_machine("skylake-8180");
  REQUIRE(skylake);
  CHECK(skylake->topology.cores == 56);
  CHECK(skylake->performance.peak_fp32_gflops_per_core->value == Approx(160));
  // EPYC 7551: four NUMA dies per socket.
  const auto epyc = data::builtin_machine("epyc-7551");
  REQUIRE(epyc);
  CHECK(epyc->topology.numa_nodes == 8);
}

TEST_CASE("an unknown machine name lists the known ones") {
  const auto result = data::builtin_machine("skylake-9999");
  REQUIRE_FALSE(result);
  CHECK(result.error().kind == ErrorKind::bad_input);
  CHECK(result.error().message.find("skylake-8180") != std::string::npos);
}

TEST_CASE("load_machine takes a name or a profile file") {
  const auto builtin = data::builtin_machine("epyc-9654");
  REQUIRE(builtin);
  const std::string path = dnntune::test::temporary_directory("profile-test") + "/profile.json";
  std::ofstream(path) << records::to_json_text(*builtin);
  const auto from_file = data::load_machine(path);
  REQUIRE(from_file);
  CHECK(records::fingerprint(*from_file) == records::fingerprint(*builtin));
  REQUIRE(data::load_machine("epyc-9654"));
}

TEST_CASE("profiles outside physical bounds are refused, naming the member") {
  const auto skylake = data::builtin_machine("skylake-8180");
  const auto h200 = data::builtin_machine("h200");
  REQUIRE(skylake);
  REQUIRE(h200);
  const nlohmann::json cpu = nlohmann::json::parse(records::to_json_text(*skylake));
  const nlohmann::json gpu = nlohmann::json::parse(records::to_json_text(*h200));
  const auto refusal = [](const nlohmann::json& document) {
    const auto read = records::machine_profile_from_json_text(document.dump(), "node.json");
    REQUIRE_FALSE(read);
    CHECK(read.error().kind == ErrorKind::bad_input);
    CHECK(read.error().message.find("node.json: ") == 0);
    return read.error().message;
  };
  nlohmann::json bad = cpu;
  bad["topology"]["cores"] = 56.5;  // taken as 56 before
  CHECK(refusal(bad).find("(/topology/cores) must be an integer") != std::string::npos);
  bad = cpu;
  bad["topology"]["pus_per_core"] = 0;
  CHECK(refusal(bad).find("(/topology/pus_per_core) 0 is outside 1..pus") != std::string::npos);
  bad = cpu;
  bad["topology"]["caches"][0]["size_bytes"] = -1;
  CHECK(refusal(bad).find("(/topology/caches/0/size_bytes) must be an integer from 0") != std::string::npos);
  bad = cpu;
  bad["topology"]["memory_bytes"] = -4096;
  CHECK(refusal(bad).find("(/topology/memory_bytes)") != std::string::npos);
  bad = cpu;
  bad["topology"]["cores"] = 4000;
  bad["topology"]["pus"] = 4000;
  bad["topology"]["cores_per_package"] = 2000;
  CHECK(refusal(bad).find("(/topology/cores) 4000 is outside 1..2048") != std::string::npos);
  bad = gpu;
  bad["gpu"]["memory_bytes"] = -1;  // "13.6 of 18446744073.7 GB per GPU" before
  CHECK(refusal(bad).find("(/gpu/memory_bytes)") != std::string::npos);
  bad = gpu;
  bad["gpu"]["memory_bytes"] = 0;
  CHECK(refusal(bad).find("(/gpu/memory_bytes) must be 1..2^52") != std::string::npos);
  bad = gpu;
  bad["gpu"]["gpus_per_node"] = 8.5;
  CHECK(refusal(bad).find("(/gpu/gpus_per_node) must be an integer") != std::string::npos);
  // The built-in profiles themselves are within bounds.
  for (const std::string& name : data::builtin_machine_names()) CHECK(data::builtin_machine(name));
}

TEST_CASE("a topology file of more cores than dnntune searches is refused, saying the limit") {
  const auto huge = probe::describe_topology_file(test::write_synthetic_topology("pack:2 core:1100 pu:1"));
  REQUIRE_FALSE(huge);
  CHECK(huge.error().message.find("(/topology/cores) 2200 is outside 1..2048 (the most cores per node") !=
        std::string::npos);
  CHECK(probe::describe_topology_file(test::write_synthetic_topology("pack:2 core:64 pu:2")));
}
