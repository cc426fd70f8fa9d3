// tests/frontend_test.cpp — the front end the command and the Python module share: what a source
// refuses, the layout predict and scale take when the user gives none, the announcement of a
// search a long list multiplies, and the partition's time limit read from sinfo.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "frontend/model_source.hpp"
#include "frontend/partition_calibration.hpp"
#include "frontend/request_defaults.hpp"
#include "tests/cli_support.hpp"
#include "tuner/recommendation.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune;

namespace {

// A spec machine's model, from the built-in references only (an empty cache: no user's).
model::Predictor spec_predictor(const std::string& machine) {
  ::setenv("DNNTUNE_CACHE_DIR", test::make_temporary_directory().c_str(), 1);
  ::unsetenv("DNNTUNE_REFERENCE_DIR");
  frontend::ModelSource source;
  source.machine = machine;
  auto predictor = frontend::load_predictor(source, {}, nullptr);
  REQUIRE(predictor);
  return std::move(*predictor);
}

}  // namespace

TEST_CASE("a source refuses an empty machine name and a topology beside a spec machine") {
  for (const char* empty : {"", " "}) {
    const auto checked = frontend::check_machine_name(empty);
    REQUIRE_FALSE(checked);
    CHECK(checked.error().kind == ErrorKind::bad_input);
    CHECK(checked.error().message.find("leave --machine out for this machine") != std::string::npos);
  }
  CHECK(frontend::check_machine_name("skylake-8180"));

  frontend::ModelSource both;
  both.machine = "skylake-8180";
  both.topology_path = test::source_path("tests/fixtures/anchored_resnet18_calibration/machine.json");
  const auto refused = frontend::load_model(both, {}, nullptr);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("--topology and --machine both describe the node") != std::string::npos);

  frontend::ModelSource missing;
  missing.calibration_path = "/no/such/calibration.json";
  missing.topology_path = "/no/such/node.xml";
  const auto absent = frontend::load_model(missing, {}, nullptr);
  REQUIRE_FALSE(absent);
  CHECK(absent.error().message == "--topology /no/such/node.xml: no such file");
}

TEST_CASE("without --ppn and --threads the layout is the one recommend picks, and it says so") {
  const auto predictor = spec_predictor("skylake-8180");
  const auto network = workloads::load_network("resnet152");
  REQUIRE(network);
  model::TrainingConfiguration asked;  // 1 x 1, batch 32, one node
  const auto defaulted = frontend::with_default_layout(predictor, *network, asked, {});
  REQUIRE(defaulted);
  const auto recommendation = tuner::recommend(predictor, *network, {}, {});
  REQUIRE(recommendation);
  const auto& pick = recommendation->best.prediction.configuration;
  CHECK(defaulted->configuration.processes_per_node == pick.processes_per_node);
  CHECK(defaulted->configuration.threads_per_process == pick.threads_per_process);
  CHECK(defaulted->configuration.processes_per_node * defaulted->configuration.threads_per_process > 1);
  CHECK(defaulted->layout_basis.find("the one `dnntune recommend` picks for resnet152 at batch 32 on skylake-8180") !=
        std::string::npos);

  // What the user gave stays: both (nothing chosen, nothing said), or --ppn alone.
  asked.processes_per_node = 2;
  asked.threads_per_process = 3;
  const auto given = frontend::with_default_layout(predictor, *network, asked, {true, true, false});
  REQUIRE(given);
  CHECK(given->configuration == asked);
  CHECK(given->layout_basis.empty());
  const auto ppn_only = frontend::with_default_layout(predictor, *network, asked, {true, false, false});
  REQUIRE(ppn_only);
  CHECK(ppn_only->configuration.processes_per_node == 2);
  CHECK_FALSE(ppn_only->layout_basis.empty());
}

TEST_CASE("a search a long --nodes list multiplies is announced with its estimate") {
  const auto predictor = spec_predictor("skylake-8180");
  const auto network = workloads::load_network("resnet18");
  REQUIRE(network);
  std::vector<std::string> lines;
  const auto heard = [&](const std::string& line) { lines.push_back(line); };
  tuner::SearchSpaceOptions space;
  CHECK(frontend::announce_search(predictor, *network, space, heard, 1e6, "--max-minutes"));
  CHECK(lines.empty());  // one node: a few hundred candidates, said nothing
  for (int nodes = 2; nodes <= 64; ++nodes) space.node_counts.push_back(nodes);
  CHECK(frontend::announce_search(predictor, *network, space, heard, 1e6, "--max-minutes"));
  REQUIRE(lines.size() == 1);
  CHECK(lines.front().rfind("scoring ", 0) == 0);
  CHECK(lines.front().find(" candidate configurations (about ") != std::string::npos);
}

TEST_CASE("the partition's time limit comes from sinfo, and nothing when SLURM cannot say") {
  {
    test::FakeSinfo sinfo("debug 1:00:00\\nbatch* 2-00:00:00\\nlong infinite\\n", 0);
    CHECK(frontend::partition_time_limit_seconds("") == Approx(2 * 86400.0));  // the default partition
    CHECK(frontend::partition_time_limit_seconds("debug") == Approx(3600.0));
    const auto unlimited = frontend::partition_time_limit_seconds("long");
    REQUIRE(unlimited);
    CHECK(std::isinf(*unlimited));
    CHECK_FALSE(frontend::partition_time_limit_seconds("nosuch"));
  }
  test::FakeSinfo failing("sinfo: error: Could not establish a configuration source\\n", 1);
  CHECK_FALSE(frontend::partition_time_limit_seconds(""));
}

// Issue 61: a search of 5,193,728 candidates ("about 97 minutes") ran with only an announcement.
TEST_CASE("a search estimated past the limit is refused with its size, its estimate and the way out") {
  const frontend::SearchEstimate long_search{5193728, 97 * 60};
  const auto refused =
      frontend::check_search_estimate(long_search, frontend::default_max_search_minutes, "--max-minutes");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == ErrorKind::bad_input);
  CHECK(refused.error().message ==
        "the search would score 5193728 candidate configurations, about 97 minutes on this machine, past the limit "
        "of 10 minutes: shorten the lists (node counts, batches, fusion sizes) or raise --max-minutes");
  CHECK(frontend::check_search_estimate(long_search, 100, "--max-minutes"));  // raised: it runs
  CHECK(frontend::check_search_estimate({300, 0}, 0.001, "--max-minutes"));   // too small to be timed
  const auto unnamed = frontend::check_search_estimate(long_search, 10, "");
  REQUIRE_FALSE(unnamed);
  CHECK(unnamed.error().message.find("raise") == std::string::npos);
}
