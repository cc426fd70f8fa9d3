// cli/command_support.hpp — what every subcommand shares: how an Error becomes a message and an
// exit code, and where output goes (stdout or -o FILE).
// Exit codes: 0 success, 1 a failure while running, 2 bad input (arguments, files, names).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "common/expected.hpp"
#include "common/shell_words.hpp"  // number_argument

namespace dnntune::cli {

constexpr int exit_failure = 1;
constexpr int exit_bad_input = 2;

// Prints "dnntune: error: MESSAGE" to stderr and ends the subcommand with the exit code of the
// error's kind (CLI11 carries it out of the callback as a CLI::RuntimeError).
[[noreturn]] void fail(const Error& error);

// fail() for a command that runs as every rank of an MPI job (mpirun, srun), where all ranks
// may meet the same error: only rank 0 prints it, every rank ends with its exit code.
[[noreturn]] void fail_in_job(const Error& error);

// Returns the value or fails the subcommand with its error.
template <class T>
T value_or_fail(Expected<T> result) {
  if (!result) fail(result.error());
  return std::move(*result);
}
inline void ok_or_fail(const Expected<void>& result) {
  if (!result) fail(result.error());
}

// Writes `text` to `path` ("" or "-" is stdout) atomically, failing the subcommand if it cannot
// (standard output included: a full disk behind `> FILE` fails with exit 1, never exit 0).
void write_output(const std::string& text, const std::string& path);

// Flushes standard output at the end of the command and returns the exit code to end with:
// `exit_code`, or exit_failure with one line on stderr when a write to standard output failed
// and was not reported yet (what a command printed straight to std::cout, --help included).
int finish_standard_output(int exit_code);

// Fails with bad input when an output option of the chosen command (-o/--output, --plot,
// --record) names one of its inputs (any other argument naming an existing file, or a file a
// measurement directory given as input holds), another of its outputs, or (but --record, which
// appends) a file in dnntune's cache: an output never replaces what the command reads. Run once,
// after parsing and before any command runs (cli/main.cpp).
void refuse_outputs_over_inputs(const CLI::App& root);

// The check of an output FILE option (-o, --plot), when parsed: its folder exists ("-" is stdout).
CLI::Validator output_file();

// Adds the output options every reporting command has: --json and -o/--output FILE.
struct OutputOptions {
  bool json = false;
  std::string path;
};
void add_output_options(CLI::App& command, OutputOptions& options);

}  // namespace dnntune::cli
