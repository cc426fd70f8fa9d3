// tests/cli_probe_test.cpp — end-to-end tests of the real `dnntune` command: probe, machines,
// help and version, bad input (exit 2, one-line message naming the problem), and the library
// example in examples/.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/cli_support.hpp"
#include "tests/topology_fixtures.hpp"

using dnntune::test::check_bad_input;
using dnntune::test::run_dnntune;
using nlohmann::json;

namespace {}  // namespace

TEST_CASE("dnntune --help, --version and a missing subcommand") {
  const auto help = run_dnntune({"--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("probe") != std::string::npos);
  CHECK(help.out.find("machines") != std::string::npos);
  const auto version = run_dnntune({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out.find("dnntune 0.") == 0);
  CHECK(run_dnntune({}).exit_code == 2);
  CHECK(run_dnntune({"no-such-command"}).exit_code == 2);
  const auto probe_help = run_dnntune({"probe", "--help"});
  CHECK(probe_help.exit_code == 0);
  CHECK(probe_help.out.find("--topology") != std::string::npos);
}

TEST_CASE("dnntune probe --quick --json on this machine") {
  const auto result = run_dnntune({"probe", "--quick", "--json"});
  REQUIRE(result.exit_code == 0);
  const auto profile = json::parse(result.out);
  CHECK(profile["schema"] == "dnntune.machine");
  CHECK(profile["origin"] == "probe");
  CHECK(profile["topology"]["packages"].get<int>() >= 1);
  CHECK(profile["topology"]["cores"].get<int>() >= 1);
  CHECK_FALSE(profile["binding"]["allowed_pus"].empty());
  CHECK_FALSE(profile["performance"].contains("fma_scaling"));  // --quick measures nothing
}

TEST_CASE("dnntune probe measures peaks and writes -o FILE") {
  const std::string path = dnntune::test::make_temporary_directory() + "/node.json";
  const auto result = run_dnntune({"probe", "--json", "-o", path});
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.empty());
  std::ifstream in(path);
  const auto profile = json::parse(in);
  const auto& performance = profile["performance"];
  CHECK(performance["peak_fp32_gflops_per_core"]["provenance"] == "measured");
  CHECK(performance["peak_fp32_gflops_per_core"]["value"].get<double>() > 0);
  CHECK(performance["memory_bandwidth_gbs_per_package"]["value"].get<double>() > 0);
  CHECK(performance["fma_scaling"].size() >= profile["binding"]["allowed_cores"].get<std::size_t>());
  CHECK(performance["triad_scaling"].size() >= 1);
  // The written profile is itself a valid --machine input.
  const auto reread = run_dnntune({"probe", "--machine", path});
  CHECK(reread.exit_code == 0);
  CHECK(reread.out.find("measured") != std::string::npos);
}

TEST_CASE("dnntune probe --topology: a synthetic 2x28-core SMT node") {
  const auto xml = dnntune::test::write_synthetic_topology("pack:2 core:28 pu:2");
  const auto result = run_dnntune({"probe", "--topology", xml, "--json"});
  REQUIRE(result.exit_code == 0);
  const auto profile = json::parse(result.out);
  CHECK(profile["topology"]["packages"] == 2);
  CHECK(profile["topology"]["cores"] == 56);
  CHECK(profile["topology"]["pus"] == 112);
  CHECK(profile["topology"]["core_list"][27]["pus"] == json::array({54, 55}));
  CHECK_FALSE(profile.contains("binding"));
  CHECK(profile["performance"].empty());  // absent, not invented
  const auto text = run_dnntune({"probe", "--topology", xml});
  CHECK(text.out.find("not measured") != std::string::npos);
}

TEST_CASE("dnntune machines and probe --machine") {
  const auto list = run_dnntune({"machines", "--json"});
  REQUIRE(list.exit_code == 0);
  CHECK(json::parse(list.out)["machines"].size() == 16);
  const auto skylake = run_dnntune({"probe", "--machine", "skylake-8180"});
  REQUIRE(skylake.exit_code == 0);
  CHECK(skylake.out.find("Platinum 8180") != std::string::npos);
  CHECK(skylake.out.find("spec") != std::string::npos);
}

TEST_CASE("bad input: exit 2 and a one-line error") {
  check_bad_input(run_dnntune({"probe", "--topology", "/nonexistent/node.xml"}), "/nonexistent/node.xml");
  const std::string directory = dnntune::test::make_temporary_directory();
  std::ofstream(directory + "/garbled.xml") << "<topology><object";
  check_bad_input(run_dnntune({"probe", "--topology", directory + "/garbled.xml"}), "garbled.xml");
  check_bad_input(run_dnntune({"probe", "--machine", "no-such-machine"}), "skylake-8180");
  std::ofstream(directory + "/garbled.json") << "{\"schema\": \"dnntune.machine\", ";
  check_bad_input(run_dnntune({"probe", "--machine", directory + "/garbled.json"}), "not valid JSON");
  std::ofstream(directory + "/old.json") << R"({"schema": "dnntune.machine", "schema_version": 0})";
  check_bad_input(run_dnntune({"probe", "--machine", directory + "/old.json"}), "schema version 0");
  CHECK(run_dnntune({"probe", "--no-such-flag"}).exit_code == 2);
}

TEST_CASE("the describe_topology example runs") {
  const auto xml = dnntune::test::write_synthetic_topology("pack:2 core:2 pu:2(indexes=0,4,1,5,2,6,3,7)");
  const auto result = dnntune::test::run_program(DNNTUNE_EXAMPLES_DIR "/describe_topology", {xml});
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("2 sockets x 2 cores x 2 SMT") != std::string::npos);
  CHECK(result.out.find("core 1 (socket 0): CPUs 1 5") != std::string::npos);
  CHECK(dnntune::test::run_program(DNNTUNE_EXAMPLES_DIR "/describe_topology", {"/nonexistent.xml"}).exit_code == 2);
}
