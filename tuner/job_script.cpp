// tuner/job_script.cpp — see job_script.hpp.
#include "tuner/job_script.hpp"

#include "common/text_format.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>

#include "common/mpirun_line.hpp"
#include "common/shell_words.hpp"
#include "tuner/sbatch_header.hpp"

namespace dnntune::tuner {
namespace {

std::string command_text(const JobScriptOptions& options) {
  const std::string command = shell_command_line(options.train_command);
  return command.empty() ? "YOUR_TRAINING_COMMAND" : command;
}

// The training command run by a per-rank shell that first sets torch.distributed's variables
// from the launcher's own: `bash -c 'export RANK=...; exec "$@"' dnntune-rank COMMAND...`.
std::string rank_wrapped(const std::string& rank_exports, const JobScriptOptions& options) {
  return "bash -c " + shell_quote(rank_exports + "; exec \"$@\"") + " dnntune-rank " + command_text(options);
}

// Text for a `#` comment line: a control character (a newline would end the comment and start
// a shell line) becomes '?'.
std::string comment_text(std::string text) {
  for (char& character : text)
    if (static_cast<unsigned char>(character) < 0x20 || character == 0x7f) character = '?';
  return text;
}

std::string summary_comment(const model::Prediction& prediction, const JobScriptOptions& options) {
  char line[512];
  std::snprintf(line, sizeof line, "# dnntune: %s, %s (%s): predicted %.1f images/s (90%% band %.1f-%.1f, %s)",
                comment_text(prediction.network).c_str(), model::describe(prediction.configuration).c_str(),
                prediction.backend.c_str(), prediction.images_per_second, prediction.images_per_second_low,
                prediction.images_per_second_high, prediction.confidence.c_str());
  std::string text = std::string(line) + "\n";  // a long name is cut, the line still ends
  if (!options.allocator_note.empty()) text += "# allocator: " + comment_text(options.allocator_note) + "\n";
  return text;
}

// What the hook dnntune.observe carries into a job's record (python/dnntune/observe.py).
std::vector<std::pair<std::string, std::string>> job_record_environment(const std::string& network,
                                                                        double predicted_images_per_second) {
  char predicted[32];
  std::snprintf(predicted, sizeof predicted, "%.6g", predicted_images_per_second);
  return {{"DNNTUNE_NETWORK", network}, {"DNNTUNE_PREDICTED_IMAGES_PER_SECOND", predicted}};
}

// The options with what a job's record carries from this prediction (launch_environment).
JobScriptOptions recorded(const JobScriptOptions& options, const model::Prediction& prediction) {
  JobScriptOptions with = options;
  with.network = prediction.network;
  with.predicted_images_per_second = prediction.images_per_second;
  return with;
}

int cores_per_process(const model::TrainingConfiguration& c, const model::MachineRates& rates) {
  const auto placement = model::place(c, rates);
  return placement ? placement->cores_per_process : c.threads_per_process;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> launch_environment(const model::TrainingConfiguration& c,
                                                                    const JobScriptOptions& options) {
  const std::string threads = std::to_string(c.threads_per_process);
  std::vector<std::pair<std::string, std::string>> environment = {
      {"OMP_NUM_THREADS", threads},
      {"OMP_PROC_BIND", "close"},
      {"OMP_PLACES", c.smt ? "threads" : "cores"},
  };
  if (options.openmp != OpenMpRuntime::gnu) {
    // Intel OpenMP (IPEX, oneDNN/TensorFlow builds): the same pinning, and short spin-waits so
    // the threads of one rank do not steal cycles from communication. GNU's ignores these.
    environment.insert(environment.end(),
                       {{"KMP_AFFINITY", c.smt ? "granularity=fine,compact,0,0" : "granularity=fine,compact,1,0"},
                        {"KMP_BLOCKTIME", "1"}});
  }
  environment.insert(environment.end(),
                     {
                         // Framework thread pools: PyTorch reads OMP_NUM_THREADS; TensorFlow these two.
                         {"TF_NUM_INTRAOP_THREADS", threads},
                         {"TF_NUM_INTEROP_THREADS", "1"},
                         {"HOROVOD_FUSION_THRESHOLD", std::to_string(static_cast<long long>(c.fusion_bytes))},
                         // The batch each rank should use, for the user's command to read.
                         {"DNNTUNE_BATCH_PER_PROCESS", std::to_string(c.batch_per_process)},
                     });
  environment.insert(environment.end(), options.allocator_environment.begin(), options.allocator_environment.end());
  if (!options.allocator_environment.empty() && !options.allocator_name.empty())
    environment.emplace_back("DNNTUNE_ALLOCATOR", options.allocator_name);
  if (!options.network.empty()) {
    const auto recorded = job_record_environment(options.network, options.predicted_images_per_second);
    environment.insert(environment.end(), recorded.begin(), recorded.end());
    // Over nodes, the fabric the answer was for: the job's record fits its terms (model/job_fabric_fit.hpp).
    if (c.nodes > 1) environment.emplace_back("DNNTUNE_FABRIC", c.fabric);
  }
  return environment;
}

std::vector<std::string> mpirun_arguments(const model::TrainingConfiguration& c, const model::MachineRates& rates,
                                          const JobScriptOptions& options) {
  // place() refused straddling and oversubscription, so the line binds to whole cores.
  MpirunRequest request;
  request.ranks_per_node = c.processes_per_node;
  request.nodes = c.nodes;
  request.cpus_per_rank = cores_per_process(c, rates);
  request.cores = rates.cores();
  request.pus = request.cores * std::max(1, rates.pus_per_core);
  request.packages = rates.packages;
  request.cores_per_package = rates.cores_per_package;
  request.pus_per_core = rates.pus_per_core;
  request.report_bindings = true;
  request.environment = launch_environment(c, options);
  return mpirun_line(request).argv;
}

std::string mpirun_command_line(const model::TrainingConfiguration& configuration, const model::MachineRates& rates,
                                const JobScriptOptions& options) {
  // MASTER_ADDR and MASTER_PORT pass through when set (mpirun_text sets them to this node).
  return shell_command_line(mpirun_arguments(configuration, rates, options)) + " -x MASTER_ADDR -x MASTER_PORT " +
         rank_wrapped(
             "export RANK=$OMPI_COMM_WORLD_RANK LOCAL_RANK=$OMPI_COMM_WORLD_LOCAL_RANK "
             "WORLD_SIZE=$OMPI_COMM_WORLD_SIZE",
             options);
}

std::string mpirun_text(const model::Prediction& prediction, const model::MachineRates& rates,
                        const JobScriptOptions& options) {
  return summary_comment(prediction, options) +
         "# torch.distributed meets at rank 0, on the node mpirun runs on:\n"
         "export MASTER_ADDR=${MASTER_ADDR:-$(hostname)} MASTER_PORT=${MASTER_PORT:-29500}\n" +
         mpirun_command_line(prediction.configuration, rates, recorded(options, prediction)) + "\n";
}

std::string torchrun_text(const model::Prediction& prediction, const model::MachineRates& rates,
                          const JobScriptOptions& options) {
  const model::TrainingConfiguration& c = prediction.configuration;
  const int cores = cores_per_process(c, rates);
  std::ostringstream out;
  out << summary_comment(prediction, options) << "# On each of the " << c.nodes << " node(s): NODE_RANK 0.."
      << c.nodes - 1 << ", MASTER_ADDR the address of node 0. torchrun binds nothing, so each worker binds itself\n"
      << "# to " << cores << " core(s) of its own (by LOCAL_RANK, cores in socket order"
      << (c.smt ? ", with their SMT siblings" : "") << ") and its memory to their NUMA node.\n";
  for (const auto& [name, value] : launch_environment(c, recorded(options, prediction)))
    out << "export " << name << "=" << shell_quote(value) << "\n";
  // The cores of this node in socket order, one line "cpu,cpu..." per core (its hardware
  // threads), read from lscpu at run time: OS CPU numbering differs between machines.
  const std::string bind =
      "cores=$(lscpu --parse=CPU,CORE,SOCKET | grep -v \"^#\" | sort -t, -k3,3n -k2,2n -k1,1n | "
      "awk -F, '{ key = $3 \" \" $2; if (key in cpus) cpus[key] = cpus[key] \",\" $1; "
      "else { cpus[key] = $1; order[n++] = key } } END { for (i = 0; i < n; i++) print cpus[order[i]] }'); "
      "first=$((LOCAL_RANK * " +
      std::to_string(cores) +
      " + 1)); "
      "cpus=$(echo \"$cores\" | sed -n \"${first},$((first + " +
      std::to_string(cores - 1) + "))p\" | " +
      (c.smt ? std::string("paste -sd,") : std::string("cut -d, -f1 | paste -sd,")) + "); " +
      "if command -v numactl >/dev/null; then exec numactl --physcpubind=\"$cpus\" --localalloc \"$@\"; "
      "else exec taskset -c \"$cpus\" \"$@\"; fi";
  // The underscore spellings: PyTorch 1.x's torchrun knows only those, 2.x both.
  out << "torchrun --nnodes=" << c.nodes << " --nproc_per_node=" << c.processes_per_node
      << " --node_rank=\"${NODE_RANK:-0}\" --master_addr=\"${MASTER_ADDR:-127.0.0.1}\""
      << " --master_port=\"${MASTER_PORT:-29500}\" --no_python \\\n    bash -c " << shell_quote(bind)
      << " dnntune-rank " << command_text(options) << "\n";
  return out.str();
}

std::string slurm_script(const model::Prediction& prediction, const model::MachineRates& rates,
                         const JobScriptOptions& options) {
  const model::TrainingConfiguration& c = prediction.configuration;
  const int cores = cores_per_process(c, rates);
  // With --hint=multithread a "CPU" is a hardware thread, with nomultithread a core.
  const int cpus_per_task = c.smt ? cores * rates.pus_per_core : cores;
  SbatchHeader header;
  header.job_name = options.job_name;
  header.nodes = c.nodes;
  header.tasks_per_node = c.processes_per_node;
  header.cpus_per_task = cpus_per_task;
  header.hint = c.smt ? "multithread" : "nomultithread";
  header.time_limit = options.time_limit;
  header.requeue = options.requeue;
  header.partition = options.partition;
  header.account = options.account;
  std::ostringstream out;
  out << sbatch_header(header) << options.time_comment << summary_comment(prediction, options) << "# Each task gets "
      << cores << " core(s) of its own; " << c.threads_per_process << " thread(s) per task"
      << (c.smt ? " on their SMT siblings" : ", one per core") << ", memory from its cores' NUMA node.\n"
      << "set -euo pipefail\n\n";
  for (const auto& [name, value] : launch_environment(c, recorded(options, prediction)))
    out << "export " << name << "=" << shell_quote(value) << "\n";
  out << "# Open MPI inside the allocation, if the command uses it without srun:\n"
      << "export OMPI_MCA_hwloc_base_binding_policy=core\n"
      << "# torch.distributed: rank 0 on the first node; RANK and LOCAL_RANK per task below.\n"
      << "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
      << "export MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000)) WORLD_SIZE=$SLURM_NTASKS\n\n"
      // Since Slurm 22.05 srun no longer inherits --cpus-per-task from sbatch: pass it on.
      // block:cyclic fills nodes rank by rank and deals the ranks round-robin over the sockets,
      // each rank's cores from one socket: ceil(ppn/S) ranks on a socket, as the model and the
      // mpirun line place them. block:block would pack 2 ranks of 14 cores onto one of two
      // 28-core sockets, sharing one socket's memory bandwidth the prediction gave to each.
      << "srun --cpus-per-task=\"$SLURM_CPUS_PER_TASK\" --cpu-bind=cores --mem-bind=local "
         "--distribution=block:cyclic \\\n    ";
  if (options.train_command.empty())
    out << "true  # put your training command here (it reads DNNTUNE_BATCH_PER_PROCESS=" << c.batch_per_process
        << "), e.g.: python train.py --batch-size " << c.batch_per_process << "\n";
  else
    out << rank_wrapped("export RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID", options) << "\n";
  return out.str();
}

namespace {

std::string gpu_summary_comment(const model::GpuPrediction& prediction) {
  char line[512];
  std::snprintf(line, sizeof line, "# dnntune: %s on %s, %s: predicted %.1f images/s (90%% band %.1f-%.1f, %s)",
                comment_text(prediction.network).c_str(), comment_text(prediction.machine).c_str(),
                model::describe(prediction.configuration).c_str(), prediction.images_per_second,
                prediction.images_per_second_low, prediction.images_per_second_high, prediction.confidence.c_str());
  return std::string(line) + "\n";  // a long name is cut, the line still ends
}

std::string megabytes_text(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", bytes / (1024.0 * 1024.0));
  return text;
}

model::GpuPrecision precision_of(const model::GpuConfiguration& c) {
  return c.precision.value_or(model::GpuPrecision::fp32);  // a prediction's configuration always names it
}

}  // namespace

std::vector<std::pair<std::string, std::string>> gpu_training_environment(const model::GpuConfiguration& c) {
  return {
      {"DNNTUNE_PRECISION", model::gpu_precision_name(precision_of(c))},
      {"DNNTUNE_MEMORY_FORMAT", model::gpu_memory_format_name(c.memory_format)},
      {"DNNTUNE_BATCH_PER_PROCESS", std::to_string(c.batch_per_gpu)},
      // DistributedDataParallel's bucket_cap_mb: the fusion threshold the prediction used.
      {"DNNTUNE_DDP_BUCKET_MB", megabytes_text(c.fusion_bytes)},
  };
}

std::string gpu_script_settings_comment(const model::GpuPrediction& prediction) {
  const model::GpuConfiguration& c = prediction.configuration;
  std::string text =
      "# Your training script must set (for DNNTUNE_PRECISION=" + model::gpu_precision_name(precision_of(c)) +
      ", DNNTUNE_MEMORY_FORMAT=" + model::gpu_memory_format_name(c.memory_format) + "):\n";
  for (const std::string& setting :
       model::gpu_script_settings(precision_of(c), c.memory_format, prediction.gpu_has_tf32))
    text += "#   " + setting + "\n";
  text +=
      "#   torch.cuda.set_device(int(os.environ['LOCAL_RANK'])); "
      "torch.distributed.init_process_group('nccl')  (one process per GPU)\n"
      "#   DistributedDataParallel(model, device_ids=[LOCAL_RANK], "
      "bucket_cap_mb=float(os.environ['DNNTUNE_DDP_BUCKET_MB'])), batch DNNTUNE_BATCH_PER_PROCESS per GPU\n";
  return text;
}

std::string gpu_slurm_script(const model::GpuPrediction& prediction, const JobScriptOptions& options) {
  const model::GpuConfiguration& c = prediction.configuration;
  SbatchHeader header;
  header.job_name = options.job_name;
  header.nodes = c.nodes;
  header.tasks_per_node = c.gpus_per_node;
  header.gpus_per_node = c.gpus_per_node;
  // The whole node: the prediction gives the pick the node's GPU links and network ports alone.
  header.exclusive = true;
  header.time_limit = options.time_limit;
  header.requeue = options.requeue;
  header.partition = options.partition;
  header.account = options.account;
  const std::string gpus = std::to_string(c.gpus_per_node);
  std::ostringstream out;
  out << sbatch_header(header) << options.time_comment << gpu_summary_comment(prediction)
      << "# One task per GPU: task LOCAL_RANK drives GPU LOCAL_RANK of its node.\n"
      << gpu_script_settings_comment(prediction) << "set -euo pipefail\n\n";
  for (const auto& [name, value] : gpu_training_environment(c))
    out << "export " << name << "=" << shell_quote(value) << "\n";
  for (const auto& [name, value] : job_record_environment(prediction.network, prediction.images_per_second))
    out << "export " << name << "=" << shell_quote(value) << "\n";
  // A GPU profile names its host CPUs but not their count: the node's CPUs (all of them, the job
  // is exclusive) are shared evenly by its GPUs' tasks when the job runs. DataLoader workers fit in them.
  out << "# The node's CPUs shared evenly by its " << gpus
      << " task(s): each task's cores, its threads and DataLoader workers.\n"
      << "export DNNTUNE_CPUS_PER_GPU=$(( SLURM_CPUS_ON_NODE / " << gpus << " > 0 ? SLURM_CPUS_ON_NODE / " << gpus
      << " : 1 ))\n"
      << "export OMP_NUM_THREADS=$DNNTUNE_CPUS_PER_GPU\n"
      << "# torch.distributed over NCCL: rank 0 on the first node; RANK and LOCAL_RANK per task below.\n"
      << "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
      << "export MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000)) WORLD_SIZE=$SLURM_NTASKS\n\n"
      // Every step gets the job's GPUs (the job asked for them with --gres); each task picks its own.
      << "srun --cpus-per-task=\"$DNNTUNE_CPUS_PER_GPU\" --cpu-bind=cores --distribution=block:block \\\n    ";
  if (options.train_command.empty())
    out << "true  # put your training command here (it reads the DNNTUNE_* variables above), e.g.: python train.py "
           "--batch-size "
        << c.batch_per_gpu << "\n";
  else
    out << rank_wrapped("export RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID", options) << "\n";
  return out.str();
}

std::string gpu_torchrun_text(const model::GpuPrediction& prediction, const JobScriptOptions& options) {
  const model::GpuConfiguration& c = prediction.configuration;
  std::ostringstream out;
  out << gpu_summary_comment(prediction) << "# On each of the " << c.nodes << " node(s): NODE_RANK 0.." << c.nodes - 1
      << ", MASTER_ADDR the address of node 0; torchrun starts one worker per GPU and sets RANK, LOCAL_RANK, "
         "WORLD_SIZE.\n"
      << gpu_script_settings_comment(prediction);
  for (const auto& [name, value] : gpu_training_environment(c))
    out << "export " << name << "=" << shell_quote(value) << "\n";
  for (const auto& [name, value] : job_record_environment(prediction.network, prediction.images_per_second))
    out << "export " << name << "=" << shell_quote(value) << "\n";
  out << "torchrun --nnodes=" << c.nodes << " --nproc_per_node=" << c.gpus_per_node
      << " --node_rank=\"${NODE_RANK:-0}\" --master_addr=\"${MASTER_ADDR:-127.0.0.1}\""
      << " --master_port=\"${MASTER_PORT:-29500}\" --no_python " << command_text(options) << "\n";
  return out.str();
}

Expected<void> check_slurm_name(const std::string& option, const std::string& value) {
  static const std::regex slurm_name(R"([A-Za-z0-9._+-]+)");
  if (!std::regex_match(value, slurm_name) || value == "." || value == "..")
    return bad_input(option + " \"" + value + "\": letters, digits and ._+- only");
  return {};
}

Expected<void> check_slurm_time(const std::string& value) {
  // SLURM's formats (sbatch(1)): MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS. Hours below 24,
  // minutes and seconds below 60 after the first field, and more than nothing in all: SLURM would
  // otherwise refuse the script at submission, or read 00:00:00 as no limit at all.
  static const std::regex minutes(R"((\d{1,7})(?::(\d{2}))?)");
  static const std::regex hours(R"((\d{1,2}):(\d{2}):(\d{2}))");
  static const std::regex days(R"((\d{1,4})-(\d{1,2})(?::(\d{2})(?::(\d{2}))?)?)");
  const auto number = [](const std::ssub_match& part) { return part.matched ? std::stol(part.str()) : 0L; };
  std::smatch parts;
  long seconds = -1;
  if (std::regex_match(value, parts, minutes)) {
    if (number(parts[2]) < 60) seconds = number(parts[1]) * 60 + number(parts[2]);
  } else if (std::regex_match(value, parts, hours)) {
    if (number(parts[1]) < 24 && number(parts[2]) < 60 && number(parts[3]) < 60)
      seconds = number(parts[1]) * 3600 + number(parts[2]) * 60 + number(parts[3]);
  } else if (std::regex_match(value, parts, days)) {
    if (number(parts[2]) < 24 && number(parts[3]) < 60 && number(parts[4]) < 60)
      seconds = number(parts[1]) * 86400 + number(parts[2]) * 3600 + number(parts[3]) * 60 + number(parts[4]);
  }
  if (seconds <= 0)
    return bad_input("--time " + printable(value) +
                     ": expected MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS with hours below 24, minutes "
                     "and seconds below 60, more than zero in all");
  return {};
}

}  // namespace dnntune::tuner
