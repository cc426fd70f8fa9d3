// tests/cli_support.hpp — runs the real `dnntune` binary for end-to-end tests and captures
// its exit code, standard output and standard error.
#pragma once

#include <string>
#include <vector>

namespace dnntune::test {

// How long a command under test may run before it counts as hung (`timeout`'s exit 124): long
// enough for any answer on a busy 2-core machine, so that only a real hang fails the test, never
// a slow run (a 10 s guard failed "a failed write to standard output" under load).
inline constexpr int hang_guard_seconds = 120;

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `program` with `args`, without a shell, standard input from /dev/null.
CommandResult run_program(const std::string& program, const std::vector<std::string>& args);

// Runs the built dnntune (DNNTUNE_BINARY) with `args`.
CommandResult run_dnntune(const std::vector<std::string>& args);

// A refusal of bad input: exit 2, nothing on standard output, one line on standard error that
// starts "dnntune: error: " and contains `text`.
void check_bad_input(const CommandResult& result, const std::string& text);

// Writes `content` as the whole of a new plain file at `path` (whatever was there is removed).
void write_file(const std::string& path, const std::string& content);

// The whole content of a file ("" when it cannot be read).
std::string read_whole_file(const std::string& path);

// A fresh empty directory under /tmp for files a test writes, removed with them when the test's process
// exits, failed or not (tests/temporary_files.hpp).
std::string make_temporary_directory();

// The source tree, for recorded inputs (DNNTUNE_SOURCE_DIR).
std::string source_path(const std::string& relative);

// Seeds the empty cache `cache_directory` with the recorded first run of tiny_network.json at batch 4
// (tests/fixtures/seed_cache.py): the command then answers from it without a first run. Returns the
// entry's folder; a failure to seed fails the test.
std::string seed_cache(const std::string& cache_directory);

// Writes DIRECTORY/machine.json as `dnntune calibrate -o DIRECTORY` finds a probed one: this machine as
// `dnntune probe --quick` describes it, with stated peaks (provenance spec) where a probe measures
// them, so that a calibration there plans without measuring them first. For tests of what comes
// after the probe: measuring the peaks is probe's own test, and cost every case (a process of its
// own under ctest) five CPU-seconds.
void write_machine_profile_with_stated_peaks(const std::string& directory);

// The tests' SLURM: a fake `sinfo` first on the PATH while the object lives, printing `output`
// (printf's format: "batch* UNLIMITED\\n") and exiting with `code`; the PATH restored after.
class FakeSinfo {
 public:
  FakeSinfo(const std::string& output, int code);
  ~FakeSinfo();
  FakeSinfo(const FakeSinfo&) = delete;
  FakeSinfo& operator=(const FakeSinfo&) = delete;

 private:
  std::string path_;
};

}  // namespace dnntune::test
