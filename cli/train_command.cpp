// cli/train_command.cpp — `dnntune train`: real data-parallel training of a network (the ground
// truth), as one process, as one rank of an MPI job (`mpirun -np P dnntune train ...`, `srun`),
// or with --launch composing and running the right `mpirun` line itself.

#include <unistd.h>

#include <iostream>

#include "common/shell_words.hpp"
#include "cli/command_support.hpp"
#include "cli/commands.hpp"
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

void run_train(const TrainCommandOptions& options) {
  if (!options.launch && (options.processes_per_node != 1 || options.nodes != 1 || !options.hostfile.empty() ||
                          options.dry_run))
    fail(bad_input("--ppn, --nodes, --hostfile and --dry-run go with --launch"));
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
      record.allocator = options.allocator;  // every rank ran under it (run_under_allocator checked)
      ok_or_fail(records::append_measurement(options.record_path, record));
    }
  }
  write_output(options.output.json ? train::training_report_json(report)
                                   : train::training_report_text(report),
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
  command->add_option("--model", options.train.model, "A built-in network (see `dnntune models`) or a network JSON file")
      ->option_text("NAME|FILE")
      ->required();
  // --batch and --momentum: the trainer's own checks (check_train_options), run before anything.
  command->add_option("--batch", options.train.batch, "Images per process and step")->capture_default_str()
      ->transform(checked(rules::any_integer));
  command->add_option("--iters", options.train.iterations, "Measured steps")->capture_default_str()
      ->transform(checked(rules::steps));
  command->add_option("--warmup", options.train.warmup, "Steps before the measured ones")->capture_default_str()
      ->transform(checked(rules::warmup_steps));
  command->add_option("--time-limit", options.train.time_limit_seconds,
                      "Start no further timed step that would end past SECONDS from the first step on (judged by "
                      "the last step's length; at least one timed step runs, after all "
                      "--warmup steps): for a budget, when a setting may be far slower than expected. Not "
                      "with --ps-servers")
      ->option_text("SECONDS")
      ->transform(checked(rules::seconds));
  command->add_option("--threads", options.train.threads,
                      "Threads per process (default: one per core the process may use; with --launch, "
                      "the node's cores / --ppn)")
      ->transform(checked(rules::ranks_or_threads));
  command->add_option("--lr", options.train.learning_rate, "SGD learning rate")->capture_default_str()
      ->transform(checked(rules::learning_rate));
  command->add_option("--momentum", options.train.momentum, "SGD momentum")->capture_default_str()
      ->transform(checked(rules::momentum));
  command->add_option("--bucket-mb", options.train.bucket_megabytes,
                      "All-reduce: gradient fusion bucket size in MiB (PyTorch DDP's default)")
      ->capture_default_str()
      ->transform(checked(rules::megabytes));
  command->add_option("--ps-servers", options.train.parameter_servers,
                      "Train through S parameter servers (the last S ranks) instead of all-reduce")
      ->transform(checked(rules::parameter_servers));
  command->add_flag("--async", options.train.asynchronous,
                    "Parameter servers apply each worker's gradient at once, without a barrier (records staleness)");
  command->add_option("--device", options.train.device, "auto (CUDA when libtorch has a GPU), cpu or cuda")
      ->capture_default_str();
  command->add_option("--precision", options.train.precision,
                      "The step's arithmetic on a GPU: auto (tf32 from compute capability 8.0 on, else fp32: "
                      "PyTorch's defaults), fp32 (strict: no TF32), tf32 (cuDNN convolutions on TF32 tensor cores), "
                      "bf16 or fp16 (autocast; fp16 with dynamic loss scaling). The CPU runs fp32")
      ->capture_default_str();
  command->add_option("--memory-format", options.train.memory_format,
                      "contiguous (NCHW) or channels_last (NHWC weights and batch, what tensor cores want)")
      ->capture_default_str();
  command->add_option("--seed", options.train.seed, "Seed of the weights and of each rank's synthetic batch")
      ->capture_default_str()
      ->transform(checked(rules::seed));
  command->add_flag("--module-times", options.train.module_times,
                    "Also time each layer inside the step (forward, and backward through gradient hooks; CPU only); "
                    "--record appends them as kind module records");
  command->add_option("--runner", options.train.runner,
                      "Who trains: dnntune (the C++ trainer: the network as dnntune's zoo builds it, in libtorch) or "
                      "python (torchvision's network trained by PyTorch from Python, DistributedDataParallel over gloo "
                      "for several ranks: what users run; $DNNTUNE_PYTHON, else /usr/bin/python3)")
      ->capture_default_str();
  command->add_option("--record", options.record_path,
                      "Append the timings as measurement records (kind network) to this JSON Lines file")
      ->option_text("FILE");
  add_output_options(*command, options.output);
  command->add_flag("--launch", options.launch,
                    "Compose and run the mpirun line for --ppn ranks per node with --threads cores each (printed "
                    "on standard error)");
  command->add_option("--ppn", options.processes_per_node, "With --launch: processes per node")
      ->capture_default_str()
      ->transform(checked(rules::ranks_or_threads));
  command->add_option("--nodes", options.nodes, "With --launch: nodes (from --hostfile or the job's allocation)")
      ->capture_default_str()
      ->transform(checked(rules::nodes));
  command->add_option("--hostfile", options.hostfile, "With --launch: mpirun's host file")->option_text("FILE");
  command->add_option("--allocator", options.allocator,
                      "The memory allocator to train under: default, glibc-tuned, jemalloc or tcmalloc (`dnntune probe` "
                      "lists what is installed); every rank loads it")
      ->capture_default_str();
  command->add_flag("--dry-run", options.dry_run, "With --launch: print the mpirun line on standard output, run nothing");
  command->callback([] { run_train(options); });
}

}  // namespace dnntune::cli
