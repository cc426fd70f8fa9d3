// cli/train_command.cpp — `dnntune train`: real data-parallel training of a network (the ground
// truth), as one process, as one rank of an MPI job (`mpirun -np P dnntune train ...`, `srun`),
// or with --launch composing and running the right `mpirun` line itself.

#include <unistd.h>

#include <iostream>

#include "common/progress.hpp"
#include "common/shell_words.hpp"
#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/option_table.hpp"
#include "pipeline/installed_allocators.hpp"
#include "probe/allocators.hpp"
#include "cli/number_rules.hpp"
#include "common/self_executable.hpp"
#include "records/measurement.hpp"
#include "probe/topology.hpp"
#include "train/launch.hpp"
#include "train/python_runner.hpp"
#include "train/trainer.hpp"
#include "train/training_report.hpp"
#include "train/train_worker.hpp"

namespace dnntune::cli {
namespace {

struct TrainCommandOptions {
  train::TrainOptions train;
  std::string record_path;
  OutputOptions output;
  bool launch = false;
  int processes_per_node = 1;
  int nodes = 1;
  std::string hostfile;
  bool dry_run = false;
  std::string allocator = "default";  // --allocator: what every rank loads
};

// What makes a rank train as `options` say (everything but the launch options), as the one
// builder of train command lines (train/train_worker.hpp) takes it.
train::TrainWorkerRequest worker_request(const TrainCommandOptions& options, int threads) {
  train::TrainWorkerRequest request;
  request.train = options.train;
  request.train.threads = threads;
  request.allocator = options.allocator;
  request.record_path = options.record_path;
  request.json = options.output.json;
  request.output_path = options.output.path;
  return request;
}

std::string this_executable() {
  auto path = self_executable_path();
  return path ? *path : std::string("dnntune");
}

void launch_job(const TrainCommandOptions& options) {
  const auto network = value_or_fail(train::check_train_request(options.train));  // before starting ranks
  if (options.allocator != "default")
    value_or_fail(probe::allocator_variant(options.allocator));  // and a bad allocator
  if (options.train.runner == records::kPythonTrainer)
    ok_or_fail(train::check_python_runner(network.name));  // and no torchvision
  const records::MachineProfile machine = value_or_fail(probe::describe_this_machine());
  const int threads = options.train.threads > 0
                          ? options.train.threads
                          : std::max(1, machine.topology.cores / std::max(1, options.processes_per_node));
  train::LaunchRequest request;
  request.processes_per_node = options.processes_per_node;
  request.threads = threads;
  request.nodes = options.nodes;
  request.hostfile = options.hostfile;
  train::TrainWorkerRequest worker = worker_request(options, threads);
  worker.executable = this_executable();
  request.program = train::train_worker_argv(worker);
  const auto plan = value_or_fail(train::plan_mpirun_launch(request, machine.topology, geteuid() == 0));
  for (const std::string& note : plan.notes) print_progress("note: " + note);
  const std::string line = shell_command_line(plan.argv);
  if (options.dry_run) {
    std::cout << line << '\n';
    return;
  }
  print_progress("launching: " + line);
  const int exit_code = value_or_fail(train::run_and_wait(plan.argv));
  if (exit_code != 0) throw CLI::RuntimeError(exit_code);
}

void run_train(const TrainCommandOptions& options) {
  if (!options.launch &&
      (options.processes_per_node != 1 || options.nodes != 1 || !options.hostfile.empty() || options.dry_run))
    fail(bad_input(long_names({&option_rows::processes_per_node, &option_rows::nodes, &option_rows::hostfile,
                               &option_rows::dry_run}) +
                   " go with " + long_name(option_rows::launch)));
  if (options.launch) {
    launch_job(options);  // each rank loads the allocator itself
    return;
  }
  ok_or_fail(pipeline::run_under_allocator(options.allocator));
  auto outcome = train::train(options.train);
  if (!outcome) fail_in_job(outcome.error());
  if (!outcome->is_rank0) return;
  const train::TrainingReport& report = outcome->report;
  for (const std::string& warning : train::training_warnings(report)) print_progress("warning: " + warning);
  if (!options.record_path.empty()) {
    train::TrainWorkerRequest reproduce = worker_request(options, report.threads);
    reproduce.record_path.clear();
    reproduce.json = false;
    reproduce.output_path.clear();
    if (report.processes > 1) {
      reproduce.launch_processes_per_node = report.processes / report.nodes;
      reproduce.launch_nodes = report.nodes;
    }
    const std::string command = train::train_worker_command(reproduce);
    for (auto record : train::training_measurements(report, reproduce.train, command)) {
      record.allocator = options.allocator;  // every rank ran under it (pipeline::run_under_allocator checked)
      ok_or_fail(records::append_measurement(options.record_path, record));
    }
  }
  write_output(options.output.json ? train::training_report_json(report) : train::training_report_text(report),
               options.output.path);
}

}  // namespace

void add_train_command(CLI::App& root) {
  static TrainCommandOptions options;
  CLI::App* command = root.add_subcommand(
      "train",
      "Train a network for real (SGD + momentum, synthetic ImageNet-shaped data, cross-entropy loss) and time "
      "each step: forward, backward, exposed communication, optimizer. One process, or every rank of an MPI job "
      "(`mpirun -np P dnntune train ...`, `srun`): all-reduce of gradient buckets overlapped with backward, or "
      "parameter servers. --launch composes the mpirun line with the right binding.");
  add_value(*command, option_rows::model, options.train.model)->required();
  // --batch and --momentum: the trainer's own checks (check_train_options), run before anything.
  add_value(*command, option_rows::trainer_batch, options.train.batch)->capture_default_str();
  add_value(*command, option_rows::iterations, options.train.iterations)->capture_default_str();
  add_value(*command, option_rows::warmup, options.train.warmup)->capture_default_str();
  add_value(*command, option_rows::time_limit_seconds, options.train.time_limit_seconds);
  add_value(*command, option_rows::threads, options.train.threads);
  add_value(*command, option_rows::learning_rate, options.train.learning_rate)->capture_default_str();
  add_value(*command, option_rows::momentum, options.train.momentum)->capture_default_str();
  add_value(*command, option_rows::bucket_megabytes, options.train.bucket_megabytes)->capture_default_str();
  add_value(*command, option_rows::ps_servers, options.train.parameter_servers);
  add_flag(*command, option_rows::asynchronous, options.train.asynchronous);
  add_value(*command, option_rows::device, options.train.device)->capture_default_str();
  add_value(*command, option_rows::precision, options.train.precision)->capture_default_str();
  add_value(*command, option_rows::memory_format, options.train.memory_format)->capture_default_str();
  add_value(*command, option_rows::seed, options.train.seed)->capture_default_str();
  add_flag(*command, option_rows::module_times, options.train.module_times);
  add_value(*command, option_rows::runner, options.train.runner)->capture_default_str();
  add_value(*command, option_rows::record, options.record_path);
  add_output_options(*command, options.output);
  add_flag(*command, option_rows::launch, options.launch);
  add_value(*command, option_rows::processes_per_node, options.processes_per_node)->capture_default_str();
  add_value(*command, option_rows::nodes, options.nodes)->capture_default_str();
  add_value(*command, option_rows::hostfile, options.hostfile);
  add_value(*command, option_rows::allocator, options.allocator)->capture_default_str();
  add_flag(*command, option_rows::dry_run, options.dry_run);
  command->callback([] { run_train(options); });
}

}  // namespace dnntune::cli
