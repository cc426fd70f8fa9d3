// tests/cli_fuzz_options_test.cpp — the option grammar (common/number_grammar.hpp) behind the
// real command, fed deterministic mutations of numbers and lists on predict, scale, recommend and
// compare: hex, signs, spaces, exponents, empty items, ranges, huge and tiny values, bytes that are
// no digits. Each run must end with exit 0 or 2 within 10 s of CPU, and an exit 0 must print no
// nan, inf or negative figure. And every option that names a file a command writes or appends to,
// as each command's --help lists them, pointed at an input of the same command (by several names)
// and into the cache: refused with exit 2 before any work, every file left as it was.
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include "tests/cli_support.hpp"
#include "tests/model_fixtures.hpp"

using dnntune::test::CommandResult;
using dnntune::test::run_dnntune;
using dnntune::test::source_path;

namespace {

// CPU seconds the finished child processes used so far: the bound on work, which a loaded
// machine (the suite's other tests, other builds) does not inflate as it does wall time.
double children_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + 1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// Number and list texts no option should misread, and a few it must take.
const std::vector<std::string>& mutated_numbers() {
  static const std::vector<std::string> texts = {"0",
                                                 "-1",
                                                 "-0",
                                                 "08",
                                                 "1e3",
                                                 "1E1",
                                                 "1e-320",
                                                 "1e999",
                                                 "0x10",
                                                 "+8",
                                                 " 8",
                                                 "8 ",
                                                 "",
                                                 ",",
                                                 "8,",
                                                 ",8",
                                                 "8,,16",
                                                 "1..",
                                                 "..8",
                                                 "8..1",
                                                 "1..8",
                                                 "0..8",
                                                 "1..1048576",
                                                 "2147483648",
                                                 "9223372036854775808",
                                                 "1.5",
                                                 "1.",
                                                 ".5",
                                                 "nan",
                                                 "inf",
                                                 "-inf",
                                                 "4096",
                                                 "4097",
                                                 "65536",
                                                 "65537",
                                                 "1048577",
                                                 "1,2,3",
                                                 "\xff",
                                                 "\xd9\xa3",
                                                 "1_000",
                                                 "1'000",
                                                 "5e-1",
                                                 "1e+2",
                                                 "00000000000000000000000008"};
  return texts;
}

struct Target {
  std::vector<std::string> command;  // the command without the mutated option
  std::vector<std::string> options;  // options whose value is mutated
};

// Each command with a source that answers at once (a calibration file, spec machines).
std::vector<Target> targets() {
  const std::string calibration = source_path("data/reference_calibrations/torch.json");
  return {
      {{"predict", "--model", "resnet18", "--calibration", calibration, "--ppn", "1", "--threads", "1"},
       {"--batch", "--nodes", "--ppn", "--threads", "--fusion-mb", "--ps", "--link-gbps", "--gpus"}},
      {{"scale", "--model", "resnet18", "--calibration", calibration, "--ppn", "1", "--threads", "1"},
       {"--batch", "--nodes", "--fusion-mb", "--threads"}},
      {{"recommend", "--model", "resnet18", "--calibration", calibration},
       {"--batch", "--nodes", "--ppn", "--fusion-mb", "--global-batch", "--epochs", "--dataset-images"}},
      {{"predict", "--model", "resnet18", "--machine", "v100"}, {"--batch", "--nodes", "--gpus", "--fusion-mb"}},
      {{"recommend", "--model", "resnet18", "--machine", "v100"}, {"--batch", "--nodes", "--gpus", "--fusion-mb"}},
      {{"compare", "--model", "resnet18", "--machine", "v100", "--machine", "a100"}, {"--batch", "--gpus"}},
  };
}

}  // namespace

TEST_CASE("fuzz: numbers and lists of the model commands' options") {
  const std::string cache = dnntune::test::make_temporary_directory();
  setenv("DNNTUNE_CACHE_DIR", cache.c_str(), 1);
  // How printf writes NaN and infinity, and negative figures.
  const std::regex unusable("\\b(nan|inf)\\b|-[0-9][0-9.]* *(images/s|GFLOP/s|GB/s)|\"images_per_second\": *-");
  std::mt19937 random(42);
  const auto all = targets();
  for (int run = 0; run < 90; ++run) {
    const Target& target = all[random() % all.size()];
    std::vector<std::string> args = target.command;
    const std::string& option = target.options[random() % target.options.size()];
    const std::string& value = mutated_numbers()[random() % mutated_numbers().size()];
    args.insert(args.end(), {option, value});
    if (random() % 2) args.push_back("--json");
    std::string line;
    for (const auto& word : args) line += word + " ";
    const auto start = std::chrono::steady_clock::now();
    const double cpu_before = children_cpu_seconds();
    const CommandResult result = run_dnntune(args);
    const double cpu_seconds = children_cpu_seconds() - cpu_before;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO(line << "\nexit " << result.exit_code << " after " << seconds << " s (" << cpu_seconds << " s of CPU)\n"
              << result.err);
    CHECK((result.exit_code == 0 || result.exit_code == 2));
    CHECK(cpu_seconds < 10);
    CHECK(seconds < 60);  // a hang, whatever the machine's load
    if (result.exit_code == 0) {
      INFO(result.out.substr(0, 2000));
      CHECK_FALSE(std::regex_search(result.out, unusable));
    }
    if (result.exit_code == 2) CHECK(result.err.find("dnntune: error: ") != std::string::npos);
  }
  unsetenv("DNNTUNE_CACHE_DIR");
}

// Issue 61: the job's time is the product of epochs, images and a predicted rate: products past
// what a long holds wrote "--time=404220854068-22:15:00" and "--time=-106751991167300--15:-30:-8".
// Every such product, on CPU and GPU machines, gives a --time SLURM takes, within the stated day
// (the tests' sinfo says UNLIMITED, or cannot say).
TEST_CASE("fuzz: durations that overflow give a --time within the limit") {
  const std::string cache = dnntune::test::make_temporary_directory();
  setenv("DNNTUNE_CACHE_DIR", cache.c_str(), 1);
  const std::string wide = source_path("tests/fixtures/wide_convolutions_network.json");
  // Networks and machines whose answers exist (the wide network fits no GPU's memory).
  const std::vector<std::pair<std::string, std::string>> answers = {
      {"resnet152", "skylake-8180"}, {"resnet152", "h200"}, {wide, "broadwell-e5-2680v4"}, {wide, "skylake-8180"}};
  const std::vector<std::string> epochs = {"1e6", "999999.999", "1", "1e-6"};
  const std::vector<std::string> images = {"1e12", "999999999999", "1", "1281167"};
  const std::regex time_line("#SBATCH --time=([0-9]+)-([0-9]{2}):([0-9]{2}):([0-9]{2})\n");
  std::mt19937 random(61);
  for (int run = 0; run < 12; ++run) {
    const auto& [network, machine] = answers[random() % answers.size()];
    const std::vector<std::string> args = {"recommend",
                                           "--model",
                                           network,
                                           "--machine",
                                           machine,
                                           "--format",
                                           "slurm",
                                           "--epochs",
                                           epochs[random() % epochs.size()],
                                           "--dataset-images",
                                           images[random() % images.size()]};
    // A sinfo that says UNLIMITED (the path that wrote the whole, overflowing training) or cannot say.
    const bool unlimited = random() % 2;
    const dnntune::test::FakeSinfo sinfo(unlimited ? "batch* UNLIMITED\\n" : "", unlimited ? 0 : 1);
    std::string line = unlimited ? "sinfo: UNLIMITED: " : "sinfo: no answer: ";
    for (const auto& word : args) line += word + " ";
    const CommandResult result = run_dnntune(args);
    INFO(line << "\nexit " << result.exit_code << "\n" << result.err);
    REQUIRE(result.exit_code == 0);
    std::smatch time;
    REQUIRE(std::regex_search(result.out, time, time_line));
    const long seconds =
        std::stol(time[1]) * 86400 + std::stol(time[2]) * 3600 + std::stol(time[3]) * 60 + std::stol(time[4]);
    CHECK(seconds > 0);
    CHECK(seconds <= 86400);
  }
  unsetenv("DNNTUNE_CACHE_DIR");
}

namespace {

namespace fs = std::filesystem;

// Every regular file under `root` with its content (links not followed).
std::map<std::string, std::string> snapshot(const std::string& root) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file() && !entry.is_symlink())
      files[entry.path().string()] = dnntune::test::read_whole_file(entry.path().string());
  return files;
}

// The options of `command` that name a file it writes or appends to, from its --help.
std::vector<std::string> output_options(const std::vector<std::string>& command) {
  std::vector<std::string> help_args = {command.front()};
  if (command.front() == "models" && command.size() > 1 && command[1] == "show") help_args.push_back("show");
  help_args.push_back("--help");
  const std::string help = run_dnntune(help_args).out;
  const std::regex option("^ +(?:-o,)?(--output|--plot|--record)\\b");
  std::vector<std::string> names;
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);)
    if (std::smatch match; std::regex_search(line, match, option)) names.push_back(match[1]);
  return names;
}

}  // namespace

TEST_CASE("fuzz: every output-naming option against an input of its command and the cache") {
  const std::string work = dnntune::test::make_temporary_directory();
  const std::string cache = work + "/cache", entry = cache + "/entry";
  fs::create_directories(entry + "/measurements");
  fs::create_directories(work + "/sub");
  const std::string network = work + "/net.json", calibration = work + "/calibration.json";
  const std::string machine = work + "/machine.json", measurements = work + "/measured";
  fs::copy_file(source_path("tests/fixtures/tiny_network.json"), network);
  fs::copy_file(source_path("data/reference_calibrations/torch.json"), calibration);
  fs::copy_file(source_path("data/machines/skylake-8180.json"), machine);
  fs::create_directories(measurements);
  dnntune::test::write_measurement_directory(measurements);
  fs::copy_file(calibration, entry + "/calibration.json");
  fs::copy_file(measurements + "/layers.jsonl", entry + "/measurements/layers.jsonl");
  fs::create_directory_symlink(work, work + "/linked");

  struct Target {
    std::vector<std::string> command;
    std::vector<std::string> inputs;  // files it reads
  };
  const std::vector<Target> targets = {
      {{"predict", "--model", network, "--calibration", calibration, "--ppn", "1", "--threads", "1"},
       {network, calibration}},
      {{"scale", "--model", network, "--calibration", calibration, "--ppn", "1", "--threads", "1", "--nodes", "1,2"},
       {network, calibration}},
      {{"recommend", "--model", network, "--calibration", calibration}, {network, calibration}},
      {{"compare", "--model", network, "--machine", "skylake-8180", "--machine", "broadwell-e5-2680v4"}, {network}},
      {{"fit", measurements, "--bootstrap", "0"}, {measurements + "/layers.jsonl", measurements + "/machine.json"}},
      {{"models", "show", network}, {network}},
      {{"probe", "--machine", machine}, {machine}},
      {{"machines"}, {}},
      {{"train", "--model", network, "--batch", "1", "--iters", "1", "--warmup", "0", "--threads", "1", "--device",
        "cpu"},
       {network}},
      {{"validate", "--model", network, "--batch", "1", "--iters", "1", "--warmup", "0"}, {network}},
      {{"calibrate", "--model", network, "--dry-run"}, {network}},
  };
  // Names of one input: itself, through "..", through a link to it, through a linked folder.
  const auto names_of = [&](const std::string& input) {
    const std::string name = fs::path(input).filename().string();
    const std::string folder = fs::path(input).parent_path().string();
    static int links = 0;
    const std::string link = work + "/link-" + std::to_string(++links) + "-to-" + name;
    fs::create_symlink(input, link);
    return std::vector<std::string>{input, folder + "/../" + fs::path(folder).filename().string() + "/" + name, link,
                                    work + "/linked" + input.substr(work.size())};
  };
  const std::vector<std::string> in_cache = {entry + "/calibration.json", entry + "/measurements/layers.jsonl",
                                             entry + "/covered.json", entry + ".lock", entry + "/measurements"};
  setenv("DNNTUNE_CACHE_DIR", cache.c_str(), 1);
  const auto before = snapshot(work);
  int runs = 0;
  for (const Target& target : targets) {
    const auto options = output_options(target.command);
    CHECK_FALSE(options.empty());
    for (const std::string& option : options) {
      std::vector<std::string> paths = in_cache;
      for (const std::string& input : target.inputs)
        for (const std::string& name : names_of(input)) paths.push_back(name);
      for (const std::string& path : paths) {
        std::vector<std::string> args = target.command;
        args.insert(args.end(), {option, path});
        std::string line;
        for (const auto& word : args) line += word + " ";
        const CommandResult result = run_dnntune(args);
        ++runs;
        INFO(line << "\nexit " << result.exit_code << "\n" << result.err);
        CHECK(result.exit_code == 2);
        CHECK(result.err.find("dnntune: error: ") == 0);
        CHECK(snapshot(work) == before);
      }
    }
  }
  unsetenv("DNNTUNE_CACHE_DIR");
  CHECK(runs > 100);
  std::error_code ignored;
  fs::remove_all(work, ignored);
}
