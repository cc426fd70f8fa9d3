// train/train_worker.cpp — see train_worker.hpp.
#include "train/train_worker.hpp"

#include "common/shell_words.hpp"

namespace dnntune::train {

std::vector<std::string> train_worker_argv(const TrainWorkerRequest& request) {
  const TrainOptions& train = request.train;
  std::vector<std::string> argv{request.executable, "train"};
  const auto add = [&argv](const std::string& name, const std::string& value) {
    argv.push_back(name);
    argv.push_back(value);
  };
  if (request.launch_processes_per_node > 0) {
    argv.push_back("--launch");
    add("--ppn", std::to_string(request.launch_processes_per_node));
    if (request.launch_nodes != 1) add("--nodes", std::to_string(request.launch_nodes));
    if (!request.hostfile.empty()) add("--hostfile", request.hostfile);
  }
  add("--model", train.model);
  add("--batch", std::to_string(train.batch));
  add("--iters", std::to_string(train.iterations));
  add("--warmup", std::to_string(train.warmup));
  if (train.threads > 0) add("--threads", std::to_string(train.threads));
  const TrainOptions defaults;
  if (train.learning_rate != defaults.learning_rate) add("--lr", number_argument(train.learning_rate));
  if (train.momentum != defaults.momentum) add("--momentum", number_argument(train.momentum));
  if (train.bucket_megabytes != defaults.bucket_megabytes) add("--bucket-mb", number_argument(train.bucket_megabytes));
  if (train.parameter_servers > 0) add("--ps-servers", std::to_string(train.parameter_servers));
  if (train.asynchronous) argv.push_back("--async");
  if (train.device != defaults.device) add("--device", train.device);
  if (train.precision != defaults.precision) add("--precision", train.precision);
  if (train.memory_format != defaults.memory_format) add("--memory-format", train.memory_format);
  if (train.seed != defaults.seed) add("--seed", std::to_string(train.seed));
  if (train.module_times) argv.push_back("--module-times");
  if (train.runner != defaults.runner) add("--runner", train.runner);
  if (train.time_limit_seconds > 0) add("--time-limit", number_argument(train.time_limit_seconds));
  if (!request.record_path.empty()) add("--record", request.record_path);
  if (request.json) argv.push_back("--json");
  if (!request.output_path.empty()) add("--output", request.output_path);
  if (request.allocator != "default") add("--allocator", request.allocator);
  return argv;
}

std::string train_worker_command(const TrainWorkerRequest& request) {
  return shell_command_line(train_worker_argv(request));
}

}  // namespace dnntune::train
