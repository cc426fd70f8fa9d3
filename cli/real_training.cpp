// cli/real_training.cpp — see real_training.hpp.
#include "cli/real_training.hpp"

#include <stdlib.h>

#include <filesystem>

#include "common/shell_words.hpp"
#include "cli/command_support.hpp"
#include "common/json_file.hpp"
#include "probe/train/launch.hpp"

namespace dnntune::cli {

MeasuredTraining train_for_real(const std::string& model, const model::TrainingConfiguration& configuration,
                                const RealTrainingOptions& options) {
  std::error_code error;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", error).string();
  if (error) fail(failure("cannot find this program's path (/proc/self/exe): " + error.message()));
  std::string directory = "/tmp/dnntune-train-XXXXXX";
  if (!mkdtemp(directory.data())) fail(failure("cannot create a temporary directory under /tmp"));
  const std::string report_path = directory + "/train.json";
  std::vector<std::string> argv = {self, "train", "--launch", "--ppn", std::to_string(configuration.processes_per_node),
                                   "--threads", std::to_string(configuration.threads_per_process), "--model", model,
                                   "--batch", std::to_string(configuration.batch_per_process), "--iters",
                                   std::to_string(options.iterations), "--warmup", std::to_string(options.warmup),
                                   "--bucket-mb", number_argument(configuration.fusion_bytes / (1024 * 1024)), "--json",
                                   "-o", report_path};
  if (!options.record_path.empty()) argv.insert(argv.end(), {"--record", options.record_path});
  const auto code = probe::train::run_and_wait(argv);
  auto report = read_json_file(report_path);
  std::filesystem::remove_all(directory, error);
  if (!code) fail(code.error());
  if (*code != 0)
    fail(failure("training " + model + " (" + model::describe(configuration) + ") failed with exit code " +
                 std::to_string(*code) + ": " + shell_command_line(argv)));
  if (!report) fail(report.error());
  MeasuredTraining run;
  try {
    run.images_per_second = report->at("images_per_second").get<double>();
    const double images = report->at("workers").get<double>() * report->at("batch").get<double>();
    const auto& iteration = report->at("timings").at("iteration");
    run.low = images / iteration.at("max_seconds").get<double>();
    run.high = images / iteration.at("min_seconds").get<double>();
  } catch (const nlohmann::json::exception& exception) {
    fail(json_conversion_error(exception, report_path));
  }
  return run;
}

}  // namespace dnntune::cli
