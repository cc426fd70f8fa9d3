// cli/train_command.cpp — `dnntune train`: real data-parallel training of a network (the ground
// truth), as one process, as one rank of an MPI job (`mpirun -np P dnntune train ...`, `srun`),
// or with --launch composing and running the right `mpirun` line itself.

#include <unistd.h>

#include <iostream>

#include <nlohmann/json.hpp>

#include "common/shell_words.hpp"
#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/option_table.hpp"
#include "probe/allocators.hpp"
#include "cli/number_rules.hpp"
#include "common/self_executable.hpp"
#include "records/measurement.hpp"
#include "probe/topology.hpp"
#include "train/comm/mpi_session.hpp"
#include "train/launch.hpp"
#include "train/python_runner.hpp"
#include "train/trainer.hpp"
#include "train/training_report.hpp"
#include "train/train_worker.hpp"
#include "workloads/zoo.hpp"

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
  std::string then_allocator;         // --then-allocator: switched to after the steps ("" = no)
  int then_iterations = 1;
};

// What makes a rank train as `options` say (everything but the launch options), as the one
// builder of train command lines (train/train_worker.hpp) takes it.
train::TrainWorkerRequest worker_request(const TrainCommandOptions& options, int threads) {
  train::TrainWorkerRequest request;
  request.train = options.train;
  request.train.threads = threads;
  request.allocator = options.allocator;
  request.then_allocator = options.then_allocator;
  request.then_iterations = options.then_iterations;
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
  ok_or_fail(train::check_train_options(options.train));
  const auto network = value_or_fail(workloads::load_network(options.train.model));  // refuse a bad model before starting ranks
  if (options.allocator != "default") value_or_fail(probe::allocator_variant(options.allocator));  // and a bad allocator
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
  for (const std::string& note : plan.notes) std::cerr << "dnntune: note: " << note << '\n';
  const std::string line = shell_command_line(plan.argv);
  if (options.dry_run) {
    std::cout << line << '\n';
    return;
  }
  std::cerr << "dnntune: launching: " << line << std::endl;
  const int exit_code = value_or_fail(train::run_and_wait(plan.argv));
  if (exit_code != 0) throw CLI::RuntimeError(exit_code);
}

// --then-allocator's conditions, checked before anything trains: one process of the C++ trainer
// under glibc's defaults (what the switch starts from; a second process could not share the
// first's warm state).
void check_then_allocator(const TrainCommandOptions& options) {
  if (options.then_allocator.empty()) return;
  if (options.then_allocator != probe::in_process_allocator)
    ok_or_fail(probe::switch_allocator_in_process(options.then_allocator));  // says which can
  if (options.allocator != "default")
    fail(bad_input("--then-allocator switches from glibc's defaults: leave out --allocator " + options.allocator));
  if (options.launch || train::comm::started_by_mpi_launcher())
    fail(bad_input("--then-allocator trains one process: not with --launch or under mpirun/srun"));
  if (options.train.runner != records::kCppTrainer)
    fail(bad_input("--then-allocator switches the C++ trainer's own allocator: not with --runner " +
                   options.train.runner));
}

// The records of `report`, trained as `trained` says under `allocator`, appended to --record; their
// command is this one's (with --then-allocator, it makes both runs).
void append_records(const TrainCommandOptions& options, const train::TrainingReport& report,
                    const train::TrainOptions& trained, const std::string& allocator) {
  if (options.record_path.empty()) return;
  train::TrainWorkerRequest reproduce = worker_request(options, report.threads);
  reproduce.record_path.clear();
  reproduce.json = false;
  reproduce.output_path.clear();
  if (report.processes > 1) {
    reproduce.launch_processes_per_node = report.processes / report.nodes;
    reproduce.launch_nodes = report.nodes;
  }
  const std::string command = train::train_worker_command(reproduce);
  for (auto record : train::training_measurements(report, trained, command)) {
    record.allocator = allocator;  // every rank ran under it (run_under_allocator checked)
    ok_or_fail(records::append_measurement(options.record_path, record));
  }
}

void run_train(const TrainCommandOptions& options) {
  if (!options.launch && (options.processes_per_node != 1 || options.nodes != 1 || !options.hostfile.empty() ||
                          options.dry_run))
    fail(bad_input("--ppn, --nodes, --hostfile and --dry-run go with --launch"));
  check_then_allocator(options);
  if (options.launch) {
    launch_job(options);  // each rank loads the allocator itself
    return;
  }
  run_under_allocator(options.allocator);
  auto outcome = train::train(options.train);
  if (!outcome) fail_in_job(outcome.error());
  if (!outcome->is_rank0) return;
  const train::TrainingReport& report = outcome->report;
  for (const std::string& warning : train::training_warnings(report))
    std::cerr << "dnntune: warning: " << warning << '\n';
  append_records(options, report, options.train, options.allocator);
  if (options.then_allocator.empty()) {
    write_output(options.output.json ? train::training_report_json(report) : train::training_report_text(report),
                 options.output.path);
    return;
  }
  // The same process, switched, the network built again: two untimed steps, as in a variant's own
  // process (the first faults the kept heap in; its optimizer step then puts the momentum buffers
  // where activations were, so the second faults in anew: one untimed step left the timed one 5-20%
  // slow, docs/results.md), then the timed ones.
  ok_or_fail(probe::switch_allocator_in_process(options.then_allocator));
  train::TrainOptions then = options.train;
  then.warmup = 2;
  then.iterations = options.then_iterations;
  then.time_limit_seconds = 0;
  then.module_times = false;
  auto switched = train::train(then);
  if (!switched) fail_in_job(switched.error());
  for (const std::string& warning : train::training_warnings(switched->report))
    std::cerr << "dnntune: warning: " << warning << '\n';
  append_records(options, switched->report, then, options.then_allocator);
  if (options.output.json) {
    nlohmann::json both = nlohmann::json::parse(train::training_report_json(report));
    both["then"] = {{"allocator", options.then_allocator},
                    {"report", nlohmann::json::parse(train::training_report_json(switched->report))}};
    write_output(both.dump(2) + "\n", options.output.path);
  } else {
    write_output(train::training_report_text(report) + "\nthen under the " + options.then_allocator +
                     " allocator, switched to in this process:\n" + train::training_report_text(switched->report),
                 options.output.path);
  }
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
  CLI::Option* then_allocator = add_value(*command, option_rows::then_allocator, options.then_allocator);
  add_value(*command, option_rows::then_iterations, options.then_iterations)
      ->capture_default_str()
      ->needs(then_allocator);
  add_flag(*command, option_rows::dry_run, options.dry_run);
  command->callback([] { run_train(options); });
}

}  // namespace dnntune::cli
