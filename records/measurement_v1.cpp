// records/measurement_v1.cpp — see measurement_v1.hpp.
#include "records/measurement_v1.hpp"

#include <cstdlib>
#include <sstream>
#include <vector>

#include "common/parse_number.hpp"

namespace dnntune::records {
namespace {

// The word after `option` in a v1 record's reproducing command: "" when the option is not there
// or ends the command. Words are split at spaces and not unquoted: for the options dnntune wrote
// there (numbers, names, --model's built-in name or a path without spaces).
std::string command_option(const Measurement& measurement, const std::string& option) {
  std::istringstream words(measurement.command);
  for (std::string word; words >> word;)
    if (word == option) return words >> word ? word : "";
  return "";
}

// `dnntune train ...` (with --launch too): the records of a training run, not of calibrate's
// micro-runs or its whole-network runs.
bool is_train_command(const std::string& command) {
  std::istringstream words(command);
  std::string program, subcommand;
  words >> program >> subcommand;
  return subcommand == "train" && program.size() >= 7 && program.compare(program.size() - 7, 7, "dnntune") == 0;
}

int count_option(const Measurement& record, const std::string& option) {
  const auto value = parse_int64(command_option(record, option));
  return value && *value >= 0 && *value <= 1000000000 ? static_cast<int>(*value) : 0;
}

}  // namespace

void migrate_v1_record(Measurement& record) {
  record.precision = default_precision(record.backend);
  record.memory_format = "contiguous";
  record.network_source = command_option(record, "--model");
  const bool trained = record.kind == MeasurementKind::network || record.kind == MeasurementKind::module;
  if (!trained || !is_train_command(record.command)) return;
  const std::string runner = command_option(record, "--runner");
  record.trainer = runner.empty() ? kCppTrainer : runner;
  record.warmup_steps = count_option(record, "--warmup");
  record.steps = count_option(record, "--iters");
  const std::string bucket = command_option(record, "--bucket-mb");
  char* end = nullptr;
  const double megabytes = bucket.empty() ? kDefaultBucketMegabytes : std::strtod(bucket.c_str(), &end);
  record.bucket_megabytes = bucket.empty() || (end && *end == '\0' && megabytes >= 0) ? megabytes : 0;
}

}  // namespace dnntune::records
