// train/train_options.cpp — check_train_options (see trainer.hpp): what can be refused before
// any process starts or libtorch is loaded.
#include <cmath>
#include <string>

#include "train/precision.hpp"
#include "train/trainer.hpp"
#include "workloads/layer.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::train {

Expected<void> check_train_options(const TrainOptions& options) {
  if (options.batch < 1) return bad_input("--batch must be at least 1, not " + std::to_string(options.batch));
  if (options.batch > workloads::max_batch)
    return bad_input("--batch must be at most " + std::to_string(workloads::max_batch) + ", not " +
                     std::to_string(options.batch));
  if (options.iterations < 1) return bad_input("--iters must be at least 1");
  if (options.warmup < 0) return bad_input("--warmup cannot be negative");
  if (!(options.time_limit_seconds >= 0) || !std::isfinite(options.time_limit_seconds))
    return bad_input("--time-limit must be zero (none) or a positive number of seconds");
  if (options.time_limit_seconds > 0 && options.parameter_servers > 0)
    return bad_input(
        "--time-limit cannot stop parameter servers early (they serve a fixed number of steps): "
        "drop one of them");
  if (options.threads < 0) return bad_input("--threads cannot be negative (0: one per allowed core)");
  if (!(options.learning_rate > 0)) return bad_input("--lr must be positive");
  if (!(options.momentum >= 0 && options.momentum < 1)) return bad_input("--momentum must be in [0, 1)");
  if (!(options.bucket_megabytes > 0)) return bad_input("--bucket-mb must be positive");
  if (options.parameter_servers < 0) return bad_input("--ps-servers cannot be negative");
  if (options.asynchronous && options.parameter_servers == 0)
    return bad_input("--async trains through parameter servers: give --ps-servers S too");
  if (options.device != "auto" && options.device != "cpu" && options.device != "cuda")
    return bad_input("--device must be auto, cpu or cuda, not '" + options.device + "'");
  if (options.module_times && options.device == "cuda")
    return bad_input("--module-times times the CPU's synchronous ops: it needs --device cpu");
  if (options.runner != records::kCppTrainer && options.runner != records::kPythonTrainer)
    return bad_input("--runner must be dnntune or python, not '" + options.runner + "'");
  if (options.runner == records::kPythonTrainer && (options.module_times || options.parameter_servers > 0))
    return bad_input(
        "--runner python trains torchvision's network with all-reduce: --module-times and "
        "--ps-servers go with --runner dnntune");
  if (auto precision = check_precision_options(options.precision, options.memory_format, options.device); !precision)
    return precision.error();
  if (options.precision == "fp16" && options.parameter_servers > 0)
    return bad_input(
        "--precision fp16 scales the loss and skips overflowing steps, which parameter servers do "
        "not: use bf16, or all-reduce");
  if (options.module_times && options.warmup < 1)
    return bad_input(
        "--module-times times the layers in the last warm-up step, so that the timed steps run "
        "without its hooks: it needs --warmup 1 or more");
  return {};
}

Expected<workloads::Network> check_train_request(const TrainOptions& options) {
  if (auto valid = check_train_options(options); !valid) return valid.error();
  return workloads::load_network(options.model);
}

}  // namespace dnntune::train
