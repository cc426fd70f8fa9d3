// cli/command_support.cpp — see command_support.hpp.
#include "cli/command_support.hpp"

#include <iostream>
#include <sstream>

#include "common/files.hpp"
#include "train/comm/mpi_session.hpp"

namespace dnntune::cli {

void fail(const Error& error) {
  std::cerr << "dnntune: error: " << error.message << '\n';
  throw CLI::RuntimeError(error.kind == ErrorKind::bad_input ? exit_bad_input : exit_failure);
}

void fail_in_job(const Error& error) {
  if (train::comm::launcher_rank() == 0) std::cerr << "dnntune: error: " << error.message << '\n';
  throw CLI::RuntimeError(error.kind == ErrorKind::bad_input ? exit_bad_input : exit_failure);
}

void write_output(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::cout << text << std::flush;
    return;
  }
  ok_or_fail(write_file_atomically(path, text));
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
  command.add_flag("--json", options.json, "Print JSON instead of the text report");
  command.add_option("-o,--output", options.path, "Write to FILE instead of standard output")
      ->option_text("FILE")
      ->check(output_file());
}

}  // namespace dnntune::cli
