// pipeline/real_training.cpp — see real_training.hpp.
#include "pipeline/real_training.hpp"

#include <stdlib.h>

#include <filesystem>

#include "common/shell_words.hpp"
#include "common/json_file.hpp"
#include "common/self_executable.hpp"
#include "train/launch.hpp"
#include "train/trainer.hpp"
#include "train/train_worker.hpp"

namespace dnntune::pipeline {

Expected<MeasuredTraining> train_for_real(const std::string& model, const model::TrainingConfiguration& configuration,
                                          const RealTrainingOptions& options) {
  const auto self = self_executable_path();
  if (!self) return self.error();
  std::string directory = "/tmp/dnntune-train-XXXXXX";
  if (!mkdtemp(directory.data())) return failure("cannot create a temporary directory under /tmp");
  const std::string report_path = directory + "/train.json";
  train::TrainWorkerRequest worker;
  worker.executable = *self;
  worker.launch_processes_per_node = configuration.processes_per_node;
  worker.train.model = model;
  worker.train.threads = configuration.threads_per_process;
  worker.train.batch = configuration.batch_per_process;
  worker.train.iterations = options.iterations;
  worker.train.warmup = options.warmup;
  worker.train.bucket_megabytes = static_cast<double>(configuration.fusion_bytes) / (1024 * 1024);
  worker.json = true;
  worker.output_path = report_path;
  worker.record_path = options.record_path;
  const std::vector<std::string> argv = train::train_worker_argv(worker);
  const auto code = train::run_and_wait(argv);
  auto report = read_json_file(report_path);
  std::error_code error;
  std::filesystem::remove_all(directory, error);
  if (!code) return code.error();
  if (*code != 0)
    return failure("training " + model + " (" + model::describe(configuration) + ") failed with exit code " +
                   std::to_string(*code) + ": " + shell_command_line(argv));
  if (!report) return report.error();
  MeasuredTraining run;
  try {
    run.images_per_second = report->at("images_per_second").get<double>();
    const double images = report->at("workers").get<double>() * report->at("batch").get<double>();
    const auto& iteration = report->at("timings").at("iteration");
    run.low = images / iteration.at("max_seconds").get<double>();
    run.high = images / iteration.at("min_seconds").get<double>();
  } catch (const nlohmann::json::exception& exception) {
    return json_conversion_error(exception, report_path);
  }
  return run;
}

Expected<RecordedTrainings> RecordedTrainings::read(const std::string& path, const std::string& fingerprint) {
  RecordedTrainings recorded;
  recorded.fingerprint_ = fingerprint;
  if (!std::filesystem::exists(path)) return recorded;
  auto file = records::read_measurements(path);
  if (!file) return file.error();
  for (records::Measurement& record : file->records)
    if (record.kind == records::MeasurementKind::network && record.pass == "iteration" &&
        record.status == records::MeasurementStatus::ok && record.median_seconds > 0)
      recorded.iterations_.push_back(std::move(record));
  return recorded;
}

std::optional<MeasuredTraining> RecordedTrainings::find(const std::string& network_name,
                                                        const model::TrainingConfiguration& configuration,
                                                        const RealTrainingOptions& options) const {
  const std::string bucket = number_argument(static_cast<double>(configuration.fusion_bytes) / (1024 * 1024));
  for (auto record = iterations_.rbegin(); record != iterations_.rend(); ++record) {
    if (record->machine_fingerprint != fingerprint_ || record->backend != "torch" || record->network != network_name ||
        record->descriptor != train::strategy_name(configuration.processes_per_node, 0, false) || record->nodes != 1 ||
        record->processes != configuration.processes_per_node || record->threads != configuration.threads_per_process ||
        record->smt != configuration.smt || record->batch != configuration.batch_per_process ||
        record->repetitions != options.iterations ||
        !records::trained_by_cpp_trainer(*record) ||  // trained from Python, not as validate trains
        record->warmup_steps != options.warmup || number_argument(record->bucket_megabytes) != bucket)
      continue;
    const double images = static_cast<double>(record->processes * record->batch);
    return MeasuredTraining{images / record->median_seconds, images / record->max_seconds,
                            images / record->min_seconds};
  }
  return std::nullopt;
}

}  // namespace dnntune::pipeline
