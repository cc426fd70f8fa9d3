// tests/cli_fuzz_files_test.cpp — the file readers behind the real command, fed mutated files
// and files that are not files (a FIFO, a folder, a link to a device, a link to the output),
// each run under a 10 s timeout. No run may hang, end with exit 0 and a non-finite or
// non-positive figure, or change a file it does not own: every file in the test's folder is
// hashed before and after each run, and only the run's own -o file may differ.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "records/measurement.hpp"
#include "tests/cli_support.hpp"
#include "tests/model_fixtures.hpp"
#include "tests/topology_fixtures.hpp"

using dnntune::test::CommandResult;
using dnntune::test::read_whole_file;
using dnntune::test::source_path;
using dnntune::test::write_file;

namespace {

// What each entry of `directory` is: its kind and, for a regular file, a hash of its bytes.
std::map<std::string, std::string> fingerprint(const std::string& directory) {
  std::map<std::string, std::string> files;
  DIR* listing = opendir(directory.c_str());
  if (!listing) return files;
  while (const dirent* entry = readdir(listing)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat status {};
    const std::string path = directory + "/" + name;
    if (lstat(path.c_str(), &status) != 0) continue;
    std::string kind = S_ISREG(status.st_mode) ? "file " : S_ISLNK(status.st_mode) ? "link " : "other ";
    if (S_ISREG(status.st_mode)) kind += std::to_string(std::hash<std::string>{}(read_whole_file(path)));
    if (S_ISLNK(status.st_mode)) {
      char target[4096] = {};
      const ssize_t length = readlink(path.c_str(), target, sizeof target - 1);
      kind += std::string(target, length > 0 ? static_cast<std::size_t>(length) : 0);
    }
    files[name] = kind;
  }
  closedir(listing);
  return files;
}

// A few deterministic mutations of `original`: truncations, byte flips, numbers replaced.
std::vector<std::string> few_mutations(const std::string& original, unsigned seed, int count) {
  std::mt19937 random(seed);
  std::vector<std::string> result = {"", original.substr(0, original.size() / 2)};
  const std::regex number("-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?");
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (auto it = std::sregex_iterator(original.begin(), original.end(), number); it != std::sregex_iterator(); ++it)
    spans.emplace_back(it->position(), it->length());
  const char* replacements[] = {"1e999", "-1", "0", "1e300", "-0", "1e-320"};
  while (static_cast<int>(result.size()) < count) {
    std::string mutated = original;
    if (!spans.empty() && random() % 2 == 0) {
      const auto& [at, length] = spans[random() % spans.size()];
      mutated.replace(at, length, replacements[random() % std::size(replacements)]);
    } else {
      mutated[random() % mutated.size()] = static_cast<char>(random() & 0xff);
    }
    result.push_back(mutated);
  }
  return result;
}

// Runs dnntune `args` under the hang guard (`timeout`) and checks the three rules; `output` is the one file
// in `directory` the run may write ("" for none).
void check_run(const std::vector<std::string>& args, const std::string& directory, const std::string& output,
               const std::string& what) {
  // How printf writes NaN and infinity, and rates that are negative or zero.
  const std::regex unusable("\\b(nan|inf)\\b|(^|[^0-9.])(-[0-9][0-9.]*|0+(\\.0+)?) *(images/s|GFLOP/s|GB/s)");
  auto before = fingerprint(directory);
  std::vector<std::string> timed = {std::to_string(dnntune::test::hang_guard_seconds), DNNTUNE_BINARY};
  timed.insert(timed.end(), args.begin(), args.end());
  const CommandResult result = dnntune::test::run_program("/usr/bin/timeout", timed);
  auto after = fingerprint(directory);
  if (!output.empty()) {
    before.erase(output);
    after.erase(output);
  }
  INFO(what << ": exit " << result.exit_code << "\n" << result.err);
  CHECK(result.exit_code != 124);  // no hang
  CHECK((result.exit_code == 0 || result.exit_code == 2));
  if (result.exit_code == 0) {
    INFO(result.out);
    CHECK_FALSE(std::regex_search(result.out, unusable));
  }
  CHECK(before == after);
}

// The kinds of non-file a reader may meet in a file's place.
void replace_by(const std::string& path, const std::string& kind) {
  std::remove(path.c_str());
  rmdir(path.c_str());
  if (kind == "fifo") REQUIRE(mkfifo(path.c_str(), 0644) == 0);
  if (kind == "folder") REQUIRE(mkdir(path.c_str(), 0755) == 0);
  if (kind == "link to /dev/zero") REQUIRE(symlink("/dev/zero", path.c_str()) == 0);
  if (kind == "dangling link") REQUIRE(symlink((path + ".missing").c_str(), path.c_str()) == 0);
}

// Every mutation of `original` at `path`, then every non-file in its place, with and without
// -o pointing at the input itself and at a FIFO beside it.
void fuzz_reader(const std::string& original, const std::string& directory, const std::string& name,
                 const std::vector<std::string>& args, unsigned seed, int count) {
  const std::string path = directory + "/" + name;
  const auto with_file = [&](std::vector<std::string> words) {
    for (auto& word : words)
      if (word == "FILE") word = path;
    return words;
  };
  int index = 0;
  for (const std::string& content : few_mutations(original, seed, count)) {
    write_file(path, content);
    check_run(with_file(args), directory, "", name + " mutation " + std::to_string(index++));
  }
  write_file(path, original);
  auto over_input = with_file(args);
  over_input.insert(over_input.end(), {"-o", path});
  check_run(over_input, directory, "", name + " -o itself");
  const std::string fifo = directory + "/out.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  auto into_fifo = with_file(args);
  into_fifo.insert(into_fifo.end(), {"-o", fifo});
  check_run(into_fifo, directory, "", name + " -o FIFO");
  std::remove(fifo.c_str());
  for (const char* kind : {"fifo", "folder", "link to /dev/zero", "dangling link"}) {
    replace_by(path, kind);
    check_run(with_file(args), directory, "", name + " replaced by a " + kind);
  }
  rmdir(path.c_str());
  std::remove(path.c_str());
}

}  // namespace

TEST_CASE("fuzz files: calibration files (predict --calibration)") {
  const std::string directory = dnntune::test::make_temporary_directory();
  fuzz_reader(read_whole_file(source_path("data/reference_calibrations/torch.json")), directory, "calibration.json",
              {"predict", "--model", "resnet18", "--ppn", "1", "--threads", "1", "--calibration", "FILE"}, 11, 12);
}

TEST_CASE("fuzz files: machine profiles (probe --machine)") {
  const std::string directory = dnntune::test::make_temporary_directory();
  fuzz_reader(read_whole_file(source_path("data/machines/skylake-8180.json")), directory, "machine.json",
              {"probe", "--machine", "FILE"}, 12, 12);
}

TEST_CASE("fuzz files: network files (models show)") {
  const std::string directory = dnntune::test::make_temporary_directory();
  fuzz_reader(read_whole_file(source_path("tests/fixtures/tiny_network.json")), directory, "network.json",
              {"models", "show", "FILE"}, 13, 12);
}

TEST_CASE("fuzz files: hwloc topologies (probe --topology)") {
  const std::string directory = dnntune::test::make_temporary_directory();
  fuzz_reader(read_whole_file(dnntune::test::write_synthetic_topology("pack:1 core:2 pu:2")), directory, "node.xml",
              {"probe", "--topology", "FILE"}, 14, 8);
}

TEST_CASE("fuzz files: measurement records (fit), bad lines among good ones") {
  const std::string directory = dnntune::test::make_temporary_directory();
  const auto machine = dnntune::test::test_machine();
  std::ofstream(directory + "/machine.json") << dnntune::records::to_json_text(machine);
  std::ostringstream records;
  for (const auto& record : dnntune::test::synthetic_records(machine, 0.02, 11))
    records << dnntune::records::to_json_line(record) << "\n";
  fuzz_reader(records.str(), directory, "layers.jsonl", {"fit", directory, "--bootstrap", "0"}, 15, 10);
}

// The gate's mutations (model/plausibility.hpp, records/record_bounds.hpp): each physical range
// crossed by a hair, in the file that states it, is refused with exit 2 naming the field; and
// the same file just inside the range still answers.
TEST_CASE("fuzz files: values just outside each physical range are refused by name") {
  const std::string directory = dnntune::test::make_temporary_directory();
  struct Mutation {
    const char* source;   // the file mutated
    const char* pointer;  // JSON pointer of the value
    double outside, inside;
    std::vector<std::string> args;  // FILE: the mutated file
  };
  const std::vector<std::string> cpu = {"predict",   "--model", "resnet18",  "--ppn", "1",
                                        "--threads", "1",       "--machine", "FILE"};
  const std::vector<std::string> gpu = {"probe", "--machine", "FILE"};  // a GPU profile file is read here
  const std::vector<std::string> calibration = {"predict",   "--model", "resnet18",      "--ppn", "1",
                                                "--threads", "1",       "--calibration", "FILE"};
  const std::vector<std::string> gpu_calibration = {"predict", "--model", "resnet18", "--machine",     "h200", "--gpus",
                                                    "1",       "--batch", "32",       "--calibration", "FILE"};
  const Mutation mutations[] = {
      {"data/machines/skylake-8180.json", "/performance/peak_fp32_gflops_per_core/value", 0.499, 0.5, cpu},
      {"data/machines/skylake-8180.json", "/performance/peak_fp32_gflops_per_core/value", 1000.1, 1000, cpu},
      {"data/machines/skylake-8180.json", "/performance/memory_bandwidth_gbs_per_package/value", 0.999, 1, cpu},
      {"data/machines/skylake-8180.json", "/performance/memory_bandwidth_gbs_per_package/value", 10000.1, 10000, cpu},
      {"data/machines/skylake-8180.json", "/cpu/base_ghz/value", 0.0999, 0.1, cpu},
      {"data/machines/h200.json", "/gpu/fp32_tflops/value", 0.0999, 0.1, gpu},
      {"data/machines/h200.json", "/gpu/memory_bandwidth_gbs/value", 100000.1, 100000, gpu},
      {"data/machines/h200.json", "/gpu/bf16_tflops/value", 20000.1, 20000, gpu},
      {"data/machines/h200.json", "/gpu/interconnect/bus_gbs/value", 0.0999, 0.1, gpu},
      {"data/reference_calibrations/torch.json", "/links/intra_node/bandwidth_gbs", 0.00999, 0.01, calibration},
      {"data/reference_calibrations/torch.json", "/machine/performance/peak_fp32_gflops_per_core/value", 1000.1, 1000,
       calibration},
      {"data/reference_calibrations/torch-cuda.json", "/efficiencies/classes/matmul/compute/0", 1.001, 1,
       gpu_calibration},
      {"data/reference_calibrations/torch-cuda.json", "/efficiencies/classes/convolution/compute/0", 4.001, 4,
       gpu_calibration},
  };
  for (const Mutation& mutation : mutations) {
    const std::string path = directory + "/mutated.json";
    std::vector<std::string> args = mutation.args;
    for (auto& word : args)
      if (word == "FILE") word = path;
    auto document = nlohmann::json::parse(read_whole_file(source_path(mutation.source)));
    const nlohmann::json::json_pointer pointer(mutation.pointer);
    REQUIRE(document.contains(pointer));
    document[pointer] = mutation.outside;
    write_file(path, document.dump());
    const CommandResult outside = dnntune::test::run_program("/usr/bin/timeout", [&] {
      std::vector<std::string> timed = {std::to_string(dnntune::test::hang_guard_seconds), DNNTUNE_BINARY};
      timed.insert(timed.end(), args.begin(), args.end());
      return timed;
    }());
    INFO(mutation.source << " " << mutation.pointer << " = " << mutation.outside << ": " << outside.err);
    CHECK(outside.exit_code == 2);
    CHECK(outside.err.find(path) != std::string::npos);
    document[pointer] = mutation.inside;
    write_file(path, document.dump());
    check_run(args, directory, "", std::string(mutation.pointer) + " just inside");
  }
  // The option that states a link, just outside and at its ends.
  for (const char* gbits : {"0.999", "1600.1"}) {
    const CommandResult refused =
        dnntune::test::run_dnntune({"predict", "--model", "resnet18", "--machine", "skylake-8180", "--ppn", "1",
                                    "--threads", "1", "--nodes", "4", "--link-gbps", gbits, "--link-latency-us", "1"});
    INFO(gbits << ": " << refused.err);
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("--link-gbps") != std::string::npos);
  }
}
