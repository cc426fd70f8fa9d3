// pipeline/measurement_inputs.cpp — see measurement_inputs.hpp.
#include "pipeline/measurement_inputs.hpp"

#include <sys/stat.h>

#include <fstream>

namespace dnntune::pipeline {
namespace {

bool is_directory(const std::string& path) {
  struct stat status {};
  return stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode);
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
      if (std::ifstream(path).good()) result.files.push_back(path);
    }
    const std::string profile = input + "/machine.json";
    if (result.machine_file.empty() && std::ifstream(profile).good()) result.machine_file = profile;
    if (result.files.size() == before)
      return bad_input(input + ": no layers.jsonl or comm.jsonl in this directory (is it a `dnntune calibrate -o` "
                               "directory?)");
  }
  for (const auto& file : result.files) {
    auto read = records::read_measurements(file);
    if (!read) return read.error();
    if (read->truncated_lines > 0) result.truncated_files.push_back(file);
    result.records.insert(result.records.end(), read->records.begin(), read->records.end());
  }
  return result;
}

}  // namespace dnntune::pipeline
