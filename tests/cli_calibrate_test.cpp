// tests/cli_calibrate_test.cpp — `dnntune calibrate` end to end: help, bad input (exit 2), the
// plan printed first, a run killed part-way and resumed, and --report.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "records/measurement.hpp"
#include "tests/cli_support.hpp"

extern char** environ;

using namespace dnntune;
using test::run_dnntune;

namespace {

const std::vector<std::string> small_layers{"--layer", "relu:ic8ih8iw8",  "--layer", "relu:ic16ih8iw8",
                                            "--layer", "bnorm:ic8ih8iw8", "--layer", "conv:ic8ih8iw8oc8kh3kw3sh1ph1"};

std::vector<std::string> with(std::vector<std::string> arguments, const std::vector<std::string>& more) {
  arguments.insert(arguments.end(), more.begin(), more.end());
  return arguments;
}

std::size_t line_count(const std::string& path) {
  std::ifstream in(path);
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

}  // namespace

TEST_CASE("calibrate --help lists the options and hides the worker", "[layers][cli]") {
  const auto result = run_dnntune({"calibrate", "--help"});
  CHECK(result.exit_code == 0);
  for (const char* option : {"--model", "--backend", "--batch", "--budget", "--resume", "--report", "--dry-run"})
    CHECK_THAT(result.out, Catch::Contains(option));
  CHECK_THAT(result.out, !Catch::Contains("--worker"));
}

TEST_CASE("calibrate refuses bad input with exit 2", "[layers][cli]") {
  const std::string directory = test::make_temporary_directory();
  const auto unknown_model = run_dnntune({"calibrate", "--model", "resnet51", "-o", directory, "--dry-run"});
  CHECK(unknown_model.exit_code == 2);
  CHECK_THAT(unknown_model.err, Catch::Contains("resnet50"));  // the known ones are listed
  CHECK(run_dnntune({"calibrate", "--model", "resnet18", "--batch", "0", "-o", directory}).exit_code == 2);
  const auto backend = run_dnntune({"calibrate", "--model", "resnet18", "--backend", "tensorflow", "-o", directory});
  CHECK(backend.exit_code == 2);
  CHECK_THAT(backend.err, Catch::Contains("onednn"));
  CHECK(run_dnntune({"calibrate", "--model", "resnet18", "--pass", "sideways", "-o", directory}).exit_code == 2);
  CHECK(run_dnntune({"calibrate", "-o", directory}).exit_code == 2);  // nothing to calibrate
  // The CPU backends run fp32 only; a precision word must be one of the four.
  const auto cpu_precision = run_dnntune({"calibrate", "--model", "resnet18", "--backend", "torch", "--precision",
                                          "fp32,bf16", "-o", directory, "--dry-run"});
  CHECK(cpu_precision.exit_code == 2);
  CHECK_THAT(cpu_precision.err, Catch::Contains("runs fp32 contiguous only"));
  const auto bad_precision =
      run_dnntune({"calibrate", "--model", "resnet18", "--precision", "fp8", "-o", directory, "--dry-run"});
  CHECK(bad_precision.exit_code == 2);
  CHECK_THAT(bad_precision.err, Catch::Contains("--precision takes fp32, tf32, bf16 or fp16"));
  const auto strict = run_dnntune(
      {"calibrate", "--model", "resnet18", "--backend", "torch", "--precision", "fp32", "-o", directory, "--dry-run"});
  CHECK(strict.exit_code == 0);
  std::filesystem::remove_all(directory);

  // A directory calibrated on another machine (a spec-sheet profile stands in for it).
  const std::string other = test::make_temporary_directory();
  REQUIRE(run_dnntune({"probe", "--machine", "skylake-8180", "--json", "-o", other + "/machine.json"}).exit_code == 0);
  const auto foreign = run_dnntune(with({"calibrate", "--resume", "-o", other}, small_layers));
  CHECK(foreign.exit_code == 2);
  CHECK_THAT(foreign.err, Catch::Contains("another machine"));
  std::filesystem::remove_all(other);
}

TEST_CASE("calibrate prints its plan, survives a kill and resumes where it stopped", "[layers][cli]") {
  const std::string directory = test::make_temporary_directory();
  const auto arguments = with({"calibrate", "--backend", "torch", "--batch", "4", "--threads", "1", "--processes", "1",
                               "--budget", "100", "-o", directory},
                              small_layers);
  const auto plan = run_dnntune(with(arguments, {"--dry-run"}));
  REQUIRE(plan.exit_code == 0);
  CHECK_THAT(plan.out, Catch::Contains("Plan") && Catch::Contains("budget 100 s") && Catch::Contains("to measure: 10"));

  // Start it, kill it once a few records are on disk.
  std::vector<std::string> storage{DNNTUNE_BINARY};
  storage.insert(storage.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& argument : storage) argv.push_back(argument.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  const std::string records = directory + "/layers.jsonl";
  // The wait ends as soon as three records are on disk; its limit only bounds a loaded machine
  // (the suite's other tests, builds), where the worker's start alone can take a minute.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  while (line_count(records) < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const auto before = records::read_measurements(records);
  REQUIRE(before);
  const std::size_t recorded = before->records.size();
  INFO(recorded << " records before the kill");
  REQUIRE(recorded >= 3);

  const auto resumed = run_dnntune(with(arguments, {"--resume"}));
  REQUIRE(resumed.exit_code == 0);
  if (recorded < 10) CHECK_THAT(resumed.out, Catch::Contains(std::to_string(recorded) + " already recorded"));
  const auto after = records::read_measurements(records);
  REQUIRE(after);
  CHECK(after->truncated_lines == 0);
  std::set<std::string> keys;
  for (const auto& record : after->records) {
    CHECK(keys.insert(records::measurement_key(record)).second);  // nothing measured twice
    CHECK(record.status == records::MeasurementStatus::ok);
  }
  CHECK(keys.size() == 10);  // each layer's passes: relu 2 + 2, bnorm 3, conv 3
  for (std::size_t index = 0; index < recorded; ++index)
    CHECK(records::to_json_line(after->records[index]) == records::to_json_line(before->records[index]));

  const auto report = run_dnntune({"calibrate", "--report", directory});
  CHECK(report.exit_code == 0);
  CHECK_THAT(report.out, Catch::Contains("Throughput") && Catch::Contains("conv3x3"));
  const auto json = run_dnntune({"calibrate", "--report", directory, "--json"});
  CHECK(json.exit_code == 0);
  CHECK_THAT(json.out, Catch::Contains("\"schema\": \"dnntune.calibration-report\""));
  std::filesystem::remove_all(directory);
}
