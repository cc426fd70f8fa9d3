// tests/cli_fuzz_test.cpp — every file reader behind the real command, fed deterministic
// mutations of real files: truncations, byte flips, numbers replaced by 1e999 / -1 / 0 / NaN-ish
// text, deep nesting, binary garbage, a huge schema_version. Each run must end with exit 0 or 2
// (never a signal, never 1 for bad input), and an exit 0 must print no nan, inf or negative rate.
#include <catch2/catch.hpp>

#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include "records/measurement.hpp"
#include "tests/cli_support.hpp"
#include "tests/model_fixtures.hpp"
#include "tests/topology_fixtures.hpp"

using dnntune::test::CommandResult;
using dnntune::test::read_whole_file;
using dnntune::test::run_dnntune;
using dnntune::test::source_path;
using dnntune::test::write_file;

namespace {

// Deterministic mutations of `original`, about `count` of them (seeded by `seed`).
std::vector<std::string> mutations(const std::string& original, unsigned seed, int count) {
  std::mt19937 random(seed);
  std::vector<std::string> result = {"", std::string(100000, '['), original + original};
  for (const double share : {0.0, 0.1, 0.5, 0.9, 0.999}) result.push_back(original.substr(0, original.size() * share));
  std::string garbage(4096, '\0');
  for (char& byte : garbage) byte = static_cast<char>(random() & 0xff);
  result.push_back(garbage);
  result.push_back(
      std::regex_replace(original, std::regex("\"schema_version\": *[0-9]+"), "\"schema_version\": 1099511627776"));
  // Numbers: the n-th number in the file replaced by something no reader should take as it is.
  const std::regex number("-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?");
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (auto it = std::sregex_iterator(original.begin(), original.end(), number); it != std::sregex_iterator(); ++it)
    spans.emplace_back(it->position(), it->length());
  const char* replacements[] = {
      "1e999", "-1", "0", "NaN", "-1e308", "\"nan\"", "Infinity", "1e-320", "9223372036854775808"};
  while (static_cast<int>(result.size()) < count) {
    std::string mutated = original;
    if (!spans.empty() && random() % 3 != 0) {
      const auto& [at, length] = spans[random() % spans.size()];
      mutated.replace(at, length, replacements[random() % std::size(replacements)]);
    } else {
      for (int flips = 1 + static_cast<int>(random() % 4); flips > 0; --flips)
        mutated[random() % mutated.size()] = static_cast<char>(random() & 0xff);
    }
    result.push_back(mutated);
  }
  return result;
}

// Runs `args` (with FILE replaced by `path`) on every mutation of `original`.
void fuzz(const std::string& original, const std::string& path, const std::vector<std::string>& args, unsigned seed,
          int count) {
  // How printf writes NaN and infinity (a mutated file's own text may say NaN or Infinity), and
  // negative rates.
  const std::regex unusable("\\b(nan|inf)\\b|-[0-9][0-9.]* *(images/s|GFLOP/s|GB/s)");
  int index = 0;
  for (const std::string& content : mutations(original, seed, count)) {
    write_file(path, content);
    const CommandResult result = run_dnntune(args);
    INFO("mutation " << index++ << " of " << path << ", exit " << result.exit_code << "\n" << result.err);
    CHECK((result.exit_code == 0 || result.exit_code == 2));
    if (result.exit_code == 0) {
      INFO(result.out);
      CHECK_FALSE(std::regex_search(result.out, unusable));
    }
    if (result.exit_code == 2) CHECK(result.err.find("dnntune: error: ") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("fuzz: calibration files (predict --calibration)") {
  const std::string directory = dnntune::test::make_temporary_directory();
  const std::string path = directory + "/calibration.json";
  fuzz(read_whole_file(source_path("data/reference_calibrations/torch.json")), path,
       {"predict", "--model", "resnet18", "--ppn", "1", "--threads", "1", "--calibration", path}, 1, 40);
}

TEST_CASE("fuzz: machine profiles (probe --machine)") {
  const std::string directory = dnntune::test::make_temporary_directory();
  const std::string path = directory + "/machine.json";
  fuzz(read_whole_file(source_path("data/machines/skylake-8180.json")), path, {"probe", "--machine", path}, 2, 30);
}

TEST_CASE("fuzz: network files (models show)") {
  const std::string directory = dnntune::test::make_temporary_directory();
  const std::string path = directory + "/network.json";
  fuzz(read_whole_file(source_path("tests/fixtures/tiny_network.json")), path, {"models", "show", path}, 3, 30);
}

TEST_CASE("fuzz: hwloc topologies (probe --topology)") {
  const std::string directory = dnntune::test::make_temporary_directory();
  const std::string path = directory + "/node.xml";
  fuzz(read_whole_file(dnntune::test::write_synthetic_topology("pack:2 core:4 pu:2")), path,
       {"probe", "--topology", path}, 4, 25);
}

TEST_CASE("fuzz: measurement records (fit)") {
  const std::string directory = dnntune::test::make_temporary_directory();
  const auto machine = dnntune::test::test_machine();
  std::ofstream(directory + "/machine.json") << dnntune::records::to_json_text(machine);
  std::ostringstream records;
  for (const auto& record : dnntune::test::synthetic_records(machine, 0.02, 11))
    records << dnntune::records::to_json_line(record) << "\n";
  fuzz(records.str(), directory + "/layers.jsonl", {"fit", directory, "--bootstrap", "0"}, 5, 15);
}
