// train/anchor.cpp — see anchor.hpp.
#include "train/anchor.hpp"

#include <cmath>
#include <filesystem>
#include <vector>

#include "train/launch.hpp"
#include "train/train_worker.hpp"

namespace dnntune::train {

Expected<std::vector<records::Measurement>> read_anchor_records(const std::string& directory) {
  const std::string path = directory + "/" + anchor_records_file;
  if (!std::filesystem::exists(path)) return std::vector<records::Measurement>{};
  if (auto dropped = records::drop_unterminated_last_line(path); !dropped) return dropped.error();
  auto file = records::read_measurements(path);
  if (!file) return file.error();
  return std::move(file->records);
}

Expected<void> run_anchor(const AnchorRequest& request) {
  if (request.batch < 1 || request.threads < 1 || request.processes < 1 || request.iterations < 1 || request.warmup < 0)
    return bad_input("an anchor needs a batch, threads, processes and timed steps of at least 1");
  TrainWorkerRequest worker;
  worker.executable = request.executable;
  // One process needs no launcher (nor Open MPI's mpirun installed): it runs on the CPUs this one
  // may use, as the calibration's base setting does.
  if (request.processes > 1) worker.launch_processes_per_node = request.processes;
  worker.train.model = request.model;
  worker.train.batch = request.batch;
  worker.train.threads = request.threads;
  worker.train.iterations = request.iterations;
  worker.train.warmup = request.warmup;
  worker.train.runner = request.runner;
  // An anchor checks the CPU model: on a GPU node, `auto` would train on the GPU instead.
  worker.train.device = "cpu";
  // Each layer's time inside the step: the fit's context correction (model/context_correction.hpp)
  // and `calibrate --report --modules`; the zoo's layers are the C++ trainer's alone.
  worker.train.module_times = request.runner == records::kCppTrainer;
  if (request.time_limit_seconds > 0) worker.train.time_limit_seconds = std::ceil(request.time_limit_seconds);
  worker.allocator = request.allocator;
  worker.record_path = request.directory + "/" + anchor_records_file;
  worker.json = true;
  worker.output_path = "/dev/null";
  const std::vector<std::string> argv = train_worker_argv(worker);
  auto code = run_and_wait(argv);
  if (!code) return code.error();
  if (*code != 0)
    return failure("the anchor run (training " + request.model + " for real) failed with exit code " +
                   std::to_string(*code));
  return {};
}

}  // namespace dnntune::train
