// pipeline/measurement_inputs.hpp — what `fit` and the cached default calibration read: measurement
// records from .jsonl files or `dnntune calibrate -o` directories (layers.jsonl, comm.jsonl,
// network.jsonl), and the machine.json such a directory holds.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"
#include "records/measurement.hpp"

namespace dnntune::pipeline {

// The files read from a `dnntune calibrate -o` directory given as an input.
inline constexpr const char* measurement_directory_files[] = {"layers.jsonl", "comm.jsonl", "network.jsonl",
                                                              "machine.json"};

struct MeasurementInputs {
  std::vector<std::string> files;  // the .jsonl files read, in order
  std::string machine_file;        // the first directory's machine.json, or ""
  std::vector<records::Measurement> records;
  std::vector<std::string> truncated_files;  // files whose last line was cut short (dropped)
  std::vector<std::string> skipped_lines;    // "FILE:LINE: why" for each bad line skipped
};

// What to say about the skipped lines: the first `shown` one by one, then how many more.
std::vector<std::string> skipped_lines_report(const std::vector<std::string>& skipped_lines, std::size_t shown = 3);

// Fails when an input is neither a measurement file nor a directory holding one, or a file is
// unreadable or holds no good record (read_measurements); bad lines among good ones are skipped.
Expected<MeasurementInputs> read_measurement_inputs(const std::vector<std::string>& inputs);

}  // namespace dnntune::pipeline
