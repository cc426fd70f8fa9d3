// cli/command_support.cpp — see command_support.hpp.
#include "cli/command_support.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "cli/option_table.hpp"
#include "common/files.hpp"
#include "common/text_format.hpp"
#include "probe/allocators.hpp"
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

void run_under_allocator(const std::string& name) {
  if (name == "default") return;
  const auto variant = value_or_fail(probe::allocator_variant(name));
  if (probe::allocator_of_this_process() == name) {
    for (const auto& [variable, value] : variant.environment) {
      if (variable == "LD_PRELOAD" && !probe::this_process_maps(value))
        fail(failure("--allocator " + name + ": " + value + " is not loaded although LD_PRELOAD names it"));
    }
    return;
  }
  for (const auto& [variable, value] : variant.environment) setenv(variable.c_str(), value.c_str(), 1);
  setenv(probe::applied_allocator_variable, name.c_str(), 1);
  std::ifstream cmdline("/proc/self/cmdline");
  std::vector<std::string> words;
  for (std::string word; std::getline(cmdline, word, '\0');) words.push_back(word);
  std::vector<char*> arguments;
  for (std::string& word : words) arguments.push_back(word.data());
  arguments.push_back(nullptr);
  execv("/proc/self/exe", arguments.data());
  fail(failure("--allocator " + name + ": cannot start again under it (" + std::strerror(errno) + ")"));
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
  add_flag(command, option_rows::json, options.json);
  add_value(command, option_rows::output, options.path)->check(output_file());
}

}  // namespace dnntune::cli
