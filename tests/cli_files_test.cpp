// tests/cli_files_test.cpp — what the real command does with the files around it: an output never
// replaces an input of the same command (or the cache), a failed write to standard output is an
// error, a FIFO never hangs it, and one bad measurement line costs only that line.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "records/measurement.hpp"
#include "tests/cli_support.hpp"
#include "tests/model_fixtures.hpp"

using dnntune::test::CommandResult;
using dnntune::test::read_whole_file;
using dnntune::test::run_dnntune;
using dnntune::test::source_path;

namespace {

// A `dnntune calibrate -o` directory of synthetic records: machine.json and layers.jsonl.
std::string measurement_directory() {
  const std::string directory = dnntune::test::make_temporary_directory();
  dnntune::test::write_measurement_directory(directory);
  return directory;
}

// `dnntune ARGS` through the shell, with its standard output redirected as `redirect` says
// (e.g. "> /dev/full"), under the hang guard (exit 124 when it hangs).
CommandResult run_redirected(const std::string& args, const std::string& redirect) {
  return dnntune::test::run_program("/bin/sh",
                                    {"-c", "exec timeout " + std::to_string(dnntune::test::hang_guard_seconds) + " " +
                                               std::string(DNNTUNE_BINARY) + " " + args + " " + redirect});
}

// A fresh folder under /tmp, removed with all it holds when the test ends, passed or failed.
struct TemporaryDirectory {
  std::string path = dnntune::test::make_temporary_directory();
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

int error_lines(const std::string& err) {
  int count = 0;
  for (std::size_t at = err.find("dnntune: error: "); at != std::string::npos;
       at = err.find("dnntune: error: ", at + 1))
    ++count;
  return count;
}

}  // namespace

TEST_CASE("an output never replaces an input of the same command") {
  const std::string directory = measurement_directory();
  const std::string records = directory + "/layers.jsonl";
  const std::string measured = read_whole_file(records);

  const auto over_records = run_dnntune({"fit", directory, "--bootstrap", "0", "-o", records});
  CHECK(over_records.exit_code == 2);
  CHECK(over_records.err == "dnntune: error: --output " + records +
                                " would replace an input of this command "
                                "(measurements " +
                                directory + "): write it elsewhere\n");
  CHECK(read_whole_file(records) == measured);
  // Through another name of the same file, too.
  const auto through_dots = run_dnntune({"fit", records, "--bootstrap", "0", "-o", directory + "/./layers.jsonl"});
  CHECK(through_dots.exit_code == 2);
  CHECK(read_whole_file(records) == measured);
  // A new file beside the measurements is fine.
  const auto beside = run_dnntune({"fit", directory, "--bootstrap", "0", "-o", directory + "/calibration.json"});
  CHECK(beside.exit_code == 0);

  const std::string calibration = directory + "/calibration.json";
  const std::string fitted = read_whole_file(calibration);
  REQUIRE_FALSE(fitted.empty());
  const auto over_calibration = run_dnntune({"predict", "--model", "resnet18", "--ppn", "1", "--threads", "1",
                                             "--calibration", calibration, "-o", calibration});
  CHECK(over_calibration.exit_code == 2);
  CHECK(over_calibration.err.find("would replace an input of this command (--calibration ") != std::string::npos);
  CHECK(read_whole_file(calibration) == fitted);

  const std::string plot = directory + "/scaling.svg";
  const auto two_outputs = run_dnntune(
      {"scale", "--model", "resnet18", "--machine", "skylake-8180", "--nodes", "1,2", "--plot", plot, "-o", plot});
  CHECK(two_outputs.exit_code == 2);
  CHECK(two_outputs.err.find("name the same file") != std::string::npos);
}

TEST_CASE("an output inside dnntune's cache is refused") {
  const std::string cache = dnntune::test::make_temporary_directory();
  REQUIRE(mkdir((cache + "/entry").c_str(), 0755) == 0);
  setenv("DNNTUNE_CACHE_DIR", cache.c_str(), 1);
  const auto into_entry = run_dnntune({"machines", "-o", cache + "/entry/calibration.json"});
  const auto elsewhere = run_dnntune({"machines", "--json", "-o", dnntune::test::make_temporary_directory() + "/x"});
  unsetenv("DNNTUNE_CACHE_DIR");
  CHECK(into_entry.exit_code == 2);
  CHECK(into_entry.err.find("is inside dnntune's cache") != std::string::npos);
  struct stat status {};
  CHECK(stat((cache + "/entry/calibration.json").c_str(), &status) != 0);
  CHECK(elsewhere.exit_code == 0);
}

TEST_CASE("a failed write to standard output fails the command with one line") {
  const char* commands[] = {
      "machines",
      "models",
      "models show resnet18",
      "predict --model resnet18 --machine skylake-8180",
      "recommend --model resnet50 --machine skylake-8180 --format slurm",
      "recommend --model resnet50 --machine skylake-8180 --explain",
      "machines --help",
  };
  for (const char* command : commands) {
    INFO(command);
    const auto full = run_redirected(command, "> /dev/full");
    CHECK(full.exit_code == 1);
    CHECK(full.err.find("dnntune: error: writing standard output: No space left on device\n") != std::string::npos);
    CHECK(error_lines(full.err) == 1);
    CHECK(run_redirected(command, "> /dev/null").exit_code == 0);
  }
}

TEST_CASE("a FIFO as an output or an input is refused at once, never waited on") {
  const std::string directory = dnntune::test::make_temporary_directory();
  const std::string fifo = directory + "/fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  const auto output = run_redirected("machines -o " + fifo, "");
  CHECK(output.exit_code == 2);
  CHECK(output.err.find(fifo + ": is a FIFO, not a regular file") != std::string::npos);
  const auto input = run_redirected("predict --model resnet18 --ppn 1 --threads 1 --calibration " + fifo, "");
  CHECK(input.exit_code == 2);
  CHECK(input.err.find(fifo + ": not a regular file") != std::string::npos);
  // Standard output named by a path (a pipe here) is still standard output.
  const auto stdout_path = run_redirected("machines -o /dev/stdout", "| cat");
  CHECK(stdout_path.exit_code == 0);
  CHECK(stdout_path.out.find("skylake-8180") != std::string::npos);
  std::remove(fifo.c_str());
}

TEST_CASE("a bad measurement line is skipped and said, and the records around it are fitted") {
  const std::string directory = measurement_directory();
  const std::string records = directory + "/layers.jsonl";
  std::string content = read_whole_file(records);
  const auto second_line = content.find('\n') + 1;
  content.insert(second_line, "{\"schema\": \"dnntune.measurement\", \"broken\n");
  std::ofstream(records, std::ios::trunc) << content;
  const auto fitted = run_dnntune({"fit", directory, "--bootstrap", "0"});
  CHECK(fitted.exit_code == 0);
  CHECK(fitted.err.find("dnntune fit: skipped a bad measurement line: " + records + ":2: ") != std::string::npos);
  CHECK(read_whole_file(records) == content);  // nothing moved or rewritten
}

TEST_CASE("a file a command appends to passes the output check: never the cache's, never another kind of file") {
  const TemporaryDirectory temporary;
  const std::string cache = temporary.path + "/cache";
  std::filesystem::create_directories(cache + "/entry");
  const std::string calibration = cache + "/entry/calibration.json";
  dnntune::test::write_file(calibration, "{\"schema\": \"dnntune.calibration\"}\n");
  const std::string network = source_path("tests/fixtures/tiny_network.json");
  const std::vector<std::string> train = {"train",    "--model", network,     "--batch", "1",        "--iters", "1",
                                          "--warmup", "0",       "--threads", "1",       "--device", "cpu"};
  const auto with_record = [&](const std::string& path) {
    auto args = train;
    args.insert(args.end(), {"--record", path});
    return args;
  };
  setenv("DNNTUNE_CACHE_DIR", cache.c_str(), 1);
  const auto into_cache = run_dnntune(with_record(calibration));
  const auto validate_into_cache = run_dnntune({"validate", "--model", "resnet18", "--record", calibration});
  // What a first run's anchor does: append to the entry's anchor records (one record per pass).
  const std::string anchors = cache + "/entry/measurements/network.jsonl";
  std::filesystem::create_directories(cache + "/entry/measurements");
  const auto anchor = run_dnntune(with_record(anchors));
  unsetenv("DNNTUNE_CACHE_DIR");
  CHECK(anchor.exit_code == 0);
  const auto anchored = dnntune::records::read_measurements(anchors);
  REQUIRE(anchored);
  CHECK_FALSE(anchored->records.empty());
  dnntune::test::check_bad_input(into_cache, "--record " + calibration + " is inside dnntune's cache");
  dnntune::test::check_bad_input(validate_into_cache, "is inside dnntune's cache");
  CHECK(read_whole_file(calibration) == "{\"schema\": \"dnntune.calibration\"}\n");

  // Records go to a file of records: a user's notes are refused before training, left as they were.
  const std::string notes = temporary.path + "/notes.txt";
  dnntune::test::write_file(notes, "first line\nsecond line");
  dnntune::test::check_bad_input(run_dnntune(with_record(notes)), notes + ":1: ");
  CHECK(read_whole_file(notes) == "first line\nsecond line");
  // As an input of the same command, too.
  dnntune::test::check_bad_input(run_dnntune(with_record(network)), "would replace an input of this command");
}

TEST_CASE("validate --resume refuses a record file that is not one before it changes a byte") {
  const TemporaryDirectory temporary;
  const std::string notes = temporary.path + "/notes.txt";
  dnntune::test::write_file(notes, "first line\nsecond line");
  // An empty cache: refused before the first run it would need.
  setenv("DNNTUNE_CACHE_DIR", (temporary.path + "/cache").c_str(), 1);
  const auto resumed = run_dnntune({"validate", "--model", "resnet152", "--batch", "32", "--iters", "1", "--warmup",
                                    "0", "--record", notes, "--resume"});
  unsetenv("DNNTUNE_CACHE_DIR");
  dnntune::test::check_bad_input(resumed, notes + ":1: ");
  CHECK(read_whole_file(notes) == "first line\nsecond line");
}

TEST_CASE("an output goes where the shell's > would send it: a held descriptor, a link's target, its mode kept") {
  const TemporaryDirectory temporary;
  const std::string& directory = temporary.path;
  // `-o /dev/stdout > res.txt`, through a private link to /proc/self/fd/1 (a failing test must
  // never turn the system's /dev/stdout into a file).
  const std::string standard_output = directory + "/stdout";
  REQUIRE(symlink("/proc/self/fd/1", standard_output.c_str()) == 0);
  const std::string result = directory + "/res.txt";
  const auto redirected =
      run_redirected("predict --model resnet18 --machine skylake-8180 -o " + standard_output, "> " + result);
  CHECK(redirected.exit_code == 0);
  CHECK(read_whole_file(result).find("images/s") != std::string::npos);
  struct stat status {};
  REQUIRE(lstat(standard_output.c_str(), &status) == 0);
  CHECK(S_ISLNK(status.st_mode));
  // Through a link: the file at its end is replaced, keeping its mode; the link stays a link.
  const std::string answer = directory + "/answer.txt", latest = directory + "/latest.txt";
  dnntune::test::write_file(answer, "old\n");
  REQUIRE(chmod(answer.c_str(), 0600) == 0);
  REQUIRE(symlink("answer.txt", latest.c_str()) == 0);
  CHECK(run_dnntune({"predict", "--model", "resnet18", "--machine", "skylake-8180", "-o", latest}).exit_code == 0);
  CHECK(read_whole_file(answer).find("images/s") != std::string::npos);
  REQUIRE(lstat(latest.c_str(), &status) == 0);
  CHECK(S_ISLNK(status.st_mode));
  REQUIRE(stat(answer.c_str(), &status) == 0);
  CHECK((status.st_mode & 07777) == 0600);
}
