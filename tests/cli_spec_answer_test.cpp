// tests/cli_spec_answer_test.cpp — the real command's spec answer: it names its basis, takes the
// closest of several references (a user's included, from DNNTUNE_REFERENCE_DIR), refuses a user
// reference it cannot read, and its JSON says whether the pick is the model's or the tie-break's.
#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "data/builtin_machines.hpp"
#include "tests/cli_support.hpp"

using namespace dnntune;

namespace {

// A folder of user references holding the built-in reference relabelled as an Intel machine.
std::string intel_reference_folder() {
  const std::string folder = test::make_temporary_directory();
  auto document = nlohmann::json::parse(data::builtin_reference_calibration("torch"));
  document["machine"]["cpu"]["model"] = "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz";
  document["machine"]["name"] = "xeon-lent";
  std::ofstream(folder + "/torch-xeon-lent.json") << document.dump();
  return folder;
}

}  // namespace

TEST_CASE("a spec answer names its reference, what it could not identify, and who picked") {
  ::unsetenv("DNNTUNE_REFERENCE_DIR");
  ::setenv("DNNTUNE_CACHE_DIR", test::make_temporary_directory().c_str(), 1);
  const auto result = test::run_dnntune({"recommend", "--model", "resnet50", "--machine", "skylake-8180", "--json"});
  REQUIRE(result.exit_code == 0);
  const auto answer = nlohmann::json::parse(result.out);
  const auto& basis = answer.at("basis");
  REQUIRE(basis.size() >= 3);
  CHECK(basis[0].get<std::string>().find("reference calibration: built-in reference \"torch\"") == 0);
  std::string all;
  for (const auto& line : basis) all += line.get<std::string>() + "\n";
  CHECK(all.find("not identified by the reference: smt_gain") != std::string::npos);
  CHECK(all.find("source: ") != std::string::npos);
  CHECK(all.find("of the pick's band") != std::string::npos);
  const std::string chosen_by = answer.at("chosen_by").get<std::string>();
  CHECK((chosen_by == "model" || chosen_by == "tie-break"));
  if (chosen_by == "tie-break")
    CHECK(answer.at("choice_note").get<std::string>().find("tie-break") != std::string::npos);
  CHECK(answer.at("how_to_settle").get<std::string>().find("calibrate --slurm") != std::string::npos);
}

TEST_CASE("the closest of several references answers, and the answer says which") {
  const std::string folder = intel_reference_folder();
  ::setenv("DNNTUNE_REFERENCE_DIR", folder.c_str(), 1);
  const auto intel = test::run_dnntune({"recommend", "--model", "resnet50", "--machine", "skylake-8180", "--json"});
  REQUIRE(intel.exit_code == 0);
  const std::string intel_basis = nlohmann::json::parse(intel.out).at("basis")[0].get<std::string>();
  CHECK(intel_basis.find(folder + "/torch-xeon-lent.json") != std::string::npos);
  CHECK(intel_basis.find("the closest of 2") != std::string::npos);
  CHECK(intel_basis.find("same vendor (intel)") != std::string::npos);
  const auto amd = test::run_dnntune({"recommend", "--model", "resnet50", "--machine", "epyc-7551", "--json"});
  REQUIRE(amd.exit_code == 0);
  CHECK(nlohmann::json::parse(amd.out).at("basis")[0].get<std::string>().find("built-in reference \"torch\"") !=
        std::string::npos);

  // A user's reference that cannot be read is an error naming it (exit 2), never skipped.
  std::ofstream(folder + "/torch-broken.json") << "{\"schema\": \"dnntune.calibration\", \"schema_version\": 2";
  const auto broken = test::run_dnntune({"recommend", "--model", "resnet50", "--machine", "skylake-8180"});
  CHECK(broken.exit_code == 2);
  CHECK(broken.err.find("torch-broken.json") != std::string::npos);
  CHECK(std::count(broken.err.begin(), broken.err.end(), '\n') == 1);
  ::unsetenv("DNNTUNE_REFERENCE_DIR");
}
