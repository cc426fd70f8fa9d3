// pipeline/measurement_inputs.cpp — see measurement_inputs.hpp.
#include "pipeline/measurement_inputs.hpp"

#include <sys/stat.h>

namespace dnntune::pipeline {
namespace {

bool is_directory(const std::string& path) {
  struct stat status {};
  return stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode);
}

// Whether something stands at `path` (a stat, never an open: opening a FIFO to see would block);
// what it is, read_measurements checks.
bool exists(const std::string& path) {
  struct stat status {};
  return lstat(path.c_str(), &status) == 0;
}

}  // namespace

Expected<MeasurementInputs> read_measurement_inputs(const std::vector<std::string>& inputs) {
  MeasurementInputs result;
  for (const auto& input : inputs) {
    if (!is_directory(input)) {
      result.files.push_back(input);
      continue;
    }
    const std::size_t before = result.files.size();
    for (const char* name : {"layers.jsonl", "comm.jsonl", "network.jsonl"}) {
      const std::string path = input + "/" + name;
      if (exists(path)) result.files.push_back(path);
    }
    const std::string profile = input + "/machine.json";
    if (result.machine_file.empty() && exists(profile)) result.machine_file = profile;
    if (result.files.size() == before)
      return bad_input(input +
                       ": no layers.jsonl or comm.jsonl in this directory (is it a `dnntune calibrate -o` "
                       "directory?)");
  }
  for (const auto& file : result.files) {
    auto read = records::read_measurements(file);
    if (!read) return read.error();
    if (read->truncated_lines > 0) result.truncated_files.push_back(file);
    result.skipped_lines.insert(result.skipped_lines.end(), read->skipped_lines.begin(), read->skipped_lines.end());
    result.records.insert(result.records.end(), read->records.begin(), read->records.end());
  }
  return result;
}

std::vector<std::string> skipped_lines_report(const std::vector<std::string>& skipped_lines, std::size_t shown) {
  std::vector<std::string> lines;
  for (std::size_t index = 0; index < skipped_lines.size() && index < shown; ++index)
    lines.push_back("skipped a bad measurement line: " + skipped_lines[index]);
  if (skipped_lines.size() > shown)
    lines.push_back("skipped " + std::to_string(skipped_lines.size() - shown) + " more bad measurement line" +
                    (skipped_lines.size() - shown == 1 ? "" : "s"));
  return lines;
}

}  // namespace dnntune::pipeline
