// cli/command_support.cpp — see command_support.hpp.
#include "cli/command_support.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "cli/option_table.hpp"
#include "common/files.hpp"
#include "pipeline/default_calibration.hpp"
#include "pipeline/measurement_inputs.hpp"
#include "common/text_format.hpp"
#include "records/measurement.hpp"
#include "train/anchor.hpp"
#include "train/comm/mpi_session.hpp"

namespace dnntune::cli {

void fail(const Error& error) {
  std::cerr << "dnntune: error: " << printable(error.message) << '\n';
  throw CLI::RuntimeError(error.kind == ErrorKind::bad_input ? exit_bad_input : exit_failure);
}

void fail_in_job(const Error& error) {
  if (train::comm::launcher_rank() == 0) std::cerr << "dnntune: error: " << printable(error.message) << '\n';
  throw CLI::RuntimeError(error.kind == ErrorKind::bad_input ? exit_bad_input : exit_failure);
}

namespace {

bool standard_output_failure_reported = false;

// The one line for a failed write to standard output; errno as the failed write left it.
Error standard_output_failure(int error_number) {
  standard_output_failure_reported = true;
  return failure(std::string("writing standard output: ") + std::strerror(error_number != 0 ? error_number : ENOSPC));
}

// Whether everything written to standard output so far reached it; errno says why not.
bool standard_output_flushed() {
  errno = 0;
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  return std::cout.good() && flushed && !std::ferror(stdout);
}

}  // namespace

void write_output(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::cout << text;
    if (!standard_output_flushed()) fail(standard_output_failure(errno));
    return;
  }
  ok_or_fail(write_file_atomically(path, text));
}

int finish_standard_output(int exit_code) {
  if (standard_output_flushed() || standard_output_failure_reported) return exit_code;
  std::cerr << "dnntune: error: " << standard_output_failure(errno).message << '\n';
  return exit_code == 0 ? exit_failure : exit_code;
}

namespace {

struct PathArgument {
  std::string option;  // as the user would write it: --calibration, -o, measurements
  std::string path;
};

bool is_output_option(const CLI::Option& option) {
  for (const std::string& name : option.get_lnames())
    if (name == "output" || name == "plot" || name == "record") return true;
  return false;
}

bool is_regular_file_or_folder(const std::string& path, bool& folder) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return false;
  folder = S_ISDIR(status.st_mode);
  return S_ISREG(status.st_mode) || folder;
}

std::string folder_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string file_name_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Whether writing `output` would replace `input` (a file) or a file that `input` (a folder of
// measurements) is read for.
bool replaces(const std::string& output, const std::string& input) {
  bool folder = false;
  if (!is_regular_file_or_folder(input, folder)) return false;
  if (!folder) return same_file(output, input);
  const std::string written = written_path(output);  // a link to DIR/layers.jsonl replaces that file
  if (!same_file(folder_of(written), input)) return false;
  const std::string name = file_name_of(written);
  for (const char* read : pipeline::measurement_directory_files)
    if (name == read) return true;
  return false;
}

}  // namespace

void refuse_outputs_over_inputs(const CLI::App& root) {
  std::vector<PathArgument> outputs, inputs;
  for (const CLI::App* command = &root; command;) {
    for (const CLI::Option* option : command->get_options()) {
      if (option->count() == 0 || option->get_expected_min() == 0) continue;  // unused, or a flag
      const std::string name = option->get_name();
      for (const std::string& value : option->results()) {
        if (value.empty() || value == "-") continue;
        (is_output_option(*option) ? outputs : inputs).push_back({name, value});
      }
    }
    const auto chosen = command->get_subcommands();
    command = chosen.empty() ? nullptr : chosen.front();
  }
  const std::string cache = pipeline::cache_directory();
  for (std::size_t index = 0; index < outputs.size(); ++index) {
    const auto& [option, path] = outputs[index];
    for (const auto& input : inputs)
      if (replaces(path, input.path))
        fail(bad_input(option + " " + path + " would replace an input of this command (" + input.option + " " +
                       input.path + "): write it elsewhere"));
    for (std::size_t other = 0; other < index; ++other)
      if (same_file(path, outputs[other].path))
        fail(bad_input(option + " " + path + " and " + outputs[other].option + " " + outputs[other].path +
                       " name the same file: give each output its own"));
    // The cache's entries, locks and SLURM records are dnntune's; references/ is where users put
    // theirs. A first run's anchors append to an entry's anchor records (`train --record`), a
    // file of records like any other: the one file of the cache --record may name.
    const bool anchor_records =
        option == long_name(option_rows::record) && file_name_of(path) == train::anchor_records_file;
    if (!anchor_records && is_inside(path, cache) && !is_inside(path, cache + "/references"))
      fail(bad_input(option + " " + path + " is inside dnntune's cache (" + cache +
                     "), which dnntune manages: "
                     "write it elsewhere"));
    // Records are appended: to a file of records (read whole now, before any work), never to another kind.
    if (option == long_name(option_rows::record)) ok_or_fail(records::check_record_file(path));
  }
}

CLI::Validator output_file() {
  return CLI::Validator(
      [](std::string& path) {
        if (path == "-") return std::string();
        const auto usable = check_output_file(path);
        return usable ? std::string() : usable.error().message;
      },
      "FILE in an existing folder");
}

void add_output_options(CLI::App& command, OutputOptions& options) {
  add_flag(command, option_rows::json, options.json);
  add_value(command, option_rows::output, options.path)->check(output_file());
}

}  // namespace dnntune::cli
