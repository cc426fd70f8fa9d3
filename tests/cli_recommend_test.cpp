// tests/cli_recommend_test.cpp — end-to-end `dnntune recommend`: the embedded default (answers
// from this machine's cached calibration, --verify, a corrupt cache entry rebuilt), the formats, and
// bad input. The first run that makes the cache entry: tests/cache/concurrent_first_run_test.sh.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/cli_support.hpp"

using dnntune::test::run_dnntune;

namespace {

std::string tiny_network() { return dnntune::test::source_path("tests/fixtures/tiny_network.json"); }

}  // namespace

TEST_CASE("recommend answers from this machine's cached calibration, verifies, and rebuilds a corrupt entry") {
  // The cache a first run makes, seeded from a recorded one (tests/fixtures/seed_cache.py): what is
  // tested here is what recommend does with it, at any speed; the first run itself, for real, on an
  // empty cache: tests/cache/concurrent_first_run_test.sh.
  const std::string cache = dnntune::test::make_temporary_directory();
  const std::string entry = dnntune::test::seed_cache(cache);
  setenv("DNNTUNE_CACHE_DIR", cache.c_str(), 1);
  const auto first = run_dnntune({"recommend", "--model", tiny_network(), "--batch", "4"});
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.err.find("calibrating") == std::string::npos);
  CHECK(first.out.find("Best for tiny_residual") != std::string::npos);
  // A figure, or "unknown" where a busy machine's runs spread the band past the gate's ratio
  // (model/plausibility.hpp): what is tested here is the cache, not the figure.
  CHECK((first.out.find("images/s (90% band") != std::string::npos ||
         first.out.find("images/s unknown (90% band") != std::string::npos));
  CHECK(first.out.find("launch: mpirun") != std::string::npos);

  const auto second = run_dnntune({"recommend", "--model", tiny_network(), "--batch", "4", "--format", "json"});
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  CHECK(second.err.find("calibrating") == std::string::npos);
  const auto answer = nlohmann::json::parse(second.out);
  CHECK(answer["best"]["backend"] == "torch");
  const auto& figure = answer["best"]["images_per_second"];
  CHECK((figure.is_number() ? figure.get<double>() > 0 : answer["best"]["band"]["known"] == false));
  CHECK(answer["configurations_scored"].get<int>() >= 1);

  // --verify K trains the K best for real and recommends the measured best.
  const auto verified = run_dnntune({"recommend", "--model", tiny_network(), "--batch", "4", "--verify", "2"});
  INFO(verified.err);
  REQUIRE(verified.exit_code == 0);
  CHECK(verified.out.find("trained for real") != std::string::npos);
  CHECK(verified.out.find("note: verified: ") != std::string::npos);
  CHECK(verified.err.find("verifying [2/2]") != std::string::npos);

  // A corrupt cache entry is rebuilt from the cached measurements, never trusted.
  std::ofstream(entry + "/calibration.json") << "{\"schema\": \"dnntune.calibration\", \"schema_ver";
  const auto third = run_dnntune({"recommend", "--model", tiny_network(), "--batch", "4", "--format", "mpirun"});
  INFO(third.err);
  REQUIRE(third.exit_code == 0);
  CHECK(third.err.find("rebuilding") != std::string::npos);
  CHECK(third.out.find("mpirun -np ") != std::string::npos);
  unsetenv("DNNTUNE_CACHE_DIR");
}

TEST_CASE("recommend for a spec machine answers without calibrating and says it is lower confidence") {
  const auto result = run_dnntune({"recommend", "--model", "resnet152", "--machine", "skylake-8180", "--nodes", "16",
                                   "--format", "slurm", "--", "python", "train.py"});
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.find("calibrating") == std::string::npos);
  CHECK(result.out.find("#SBATCH --nodes=16\n") != std::string::npos);
  CHECK(result.out.find(", spec)") != std::string::npos);
  CHECK(result.out.find("python train.py\n") != std::string::npos);
}

TEST_CASE("recommend: bad input is exit 2 with a clear message") {
  auto check = [](const dnntune::test::CommandResult& result, const std::string& text) {
    INFO(result.err);
    CHECK(result.exit_code == 2);
    CHECK(result.err.find(text) != std::string::npos);
  };
  check(run_dnntune({"recommend", "--model", "resnet9000"}), "resnet50");
  check(run_dnntune({"recommend", "--model", "resnet18", "--machine", "no-such-machine", "--calibration", "x.json"}),
        "x.json");
  check(run_dnntune({"recommend", "--model", "resnet18", "--batch", "0"}), "--batch");
  check(run_dnntune({"recommend", "--model", "resnet18", "--nodes", "0"}), "node count");
  check(run_dnntune({"recommend", "--model", "resnet18", "--format", "pdf"}), "--format");
  check(run_dnntune({"recommend", "--model", "resnet18", "--topology", "/nonexistent.xml"}),
        "--topology needs --calibration");
}
