// tests/cli_validate_test.cpp — end-to-end `dnntune validate`: real training (through mpirun)
// in every valid configuration of this machine against the model's predictions, and an
// interrupted validate resumed from its --record file without training again what it holds.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/cli_support.hpp"

using dnntune::test::run_dnntune;

namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t occurrences(const std::string& text, const std::string& word) {
  std::size_t count = 0;
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + word.size())) ++count;
  return count;
}

}  // namespace

TEST_CASE("validate compares real training with the model, and resumes from its records") {
  const std::string directory = dnntune::test::make_temporary_directory();
  // The default calibration from a recorded first run (tests/cache/concurrent_first_run_test.sh makes a
  // real one): what is tested here is validate, not what a first run measures in the time a busy machine
  // leaves.
  setenv("DNNTUNE_CACHE_DIR", (directory + "/cache").c_str(), 1);
  dnntune::test::seed_cache(directory + "/cache");
  const std::string records = directory + "/runs.jsonl";
  const std::vector<std::string> validate = {
      "validate", "--model",  dnntune::test::source_path("tests/fixtures/tiny_network.json"),
      "--batch",  "4",        "--iters",
      "2",        "--record", records,
      "--json"};
  const auto first = run_dnntune(validate);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.err.find("calibrating") == std::string::npos);  // answered from the seeded cache
  const auto report = nlohmann::json::parse(first.out);
  const auto& runs = report["runs"];
  REQUIRE(runs.size() >= 1);
  for (const auto& run : runs) {
    CHECK(run["measured_images_per_second"].get<double>() > 0);
    // A figure, or unknown where the recorded busy machine's runs spread the band past the gate's
    // ratio (model/plausibility.hpp): what is tested here is validate, not the figure.
    const auto& figure = run["prediction"]["images_per_second"];
    CHECK((figure.is_number() ? figure.get<double>() > 0 : run["prediction"]["band"]["known"] == false));
  }
  CHECK(report["mape_percent_overall"].get<double>() >= 0);
  const auto written = lines_of(records);
  REQUIRE(written.size() % runs.size() == 0);  // each run appends the same passes
  const std::size_t per_run = written.size() / runs.size();

  // Interrupted in its last run: that run's records are missing, a kill cut the one being written.
  {
    std::ofstream cut(records, std::ios::trunc);
    for (std::size_t line = 0; line + per_run < written.size(); ++line) cut << written[line] << "\n";
    cut << written.back().substr(0, written.back().size() / 2);
  }
  auto resume = validate;
  resume.push_back("--resume");
  const auto second = run_dnntune(resume);
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  CHECK(occurrences(second.err, "/process: read back from") == runs.size() - 1);
  CHECK(occurrences(second.err, "/process: training") == 1);
  const auto resumed = nlohmann::json::parse(second.out)["runs"];
  REQUIRE(resumed.size() == runs.size());
  for (std::size_t run = 0; run + 1 < runs.size(); ++run)
    CHECK(resumed[run]["measured_images_per_second"].get<double>() ==
          Approx(runs[run]["measured_images_per_second"].get<double>()));
  CHECK(lines_of(records).size() == written.size());  // whole lines again: the cut one was dropped

  // --resume needs the file to read back.
  auto no_record = std::vector<std::string>(validate.begin(), validate.begin() + 7);
  no_record.push_back("--resume");
  const auto refused = run_dnntune(no_record);
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("--record FILE") != std::string::npos);
  unsetenv("DNNTUNE_CACHE_DIR");
  std::filesystem::remove_all(directory);
}
