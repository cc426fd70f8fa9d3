// tuner/job_script.cpp — see job_script.hpp.
#include "tuner/job_script.hpp"

#include <cctype>
#include <cstdio>
#include <sstream>

#include "common/open_mpi_mapping.hpp"
#include "common/shell_words.hpp"

namespace dnntune::tuner {
namespace {

std::string command_text(const JobScriptOptions& options) {
  return shell_command_line(options.train_command);
}

// Text for a `#` comment line: a control character (a newline would end the comment and start
// a shell line) becomes '?'.
std::string comment_text(std::string text) {
  for (char& character : text)
    if (static_cast<unsigned char>(character) < 0x20 || character == 0x7f) character = '?';
  return text;
}

// A SLURM job name as a script line carries it safely: letters, digits, '.', '_' and '-'; any
// other character becomes '_'.
std::string job_name_text(std::string name) {
  for (char& character : name)
    if (!std::isalnum(static_cast<unsigned char>(character)) && character != '.' && character != '_' &&
        character != '-')
      character = '_';
  return name;
}

std::string summary_comment(const model::Prediction& prediction) {
  char line[512];
  std::snprintf(line, sizeof line, "# dnntune: %s, %s (%s): predicted %.1f images/s (90%% band %.1f-%.1f, %s)",
                comment_text(prediction.network).c_str(), model::describe(prediction.configuration).c_str(),
                prediction.backend.c_str(), prediction.images_per_second, prediction.images_per_second_low,
                prediction.images_per_second_high, prediction.confidence.c_str());
  return std::string(line) + "\n";  // a long name is cut, the line still ends
}

}  // namespace

std::vector<std::pair<std::string, std::string>> launch_environment(const model::TrainingConfiguration& c) {
  const std::string threads = std::to_string(c.threads_per_process);
  return {
      {"OMP_NUM_THREADS", threads},
      {"OMP_PROC_BIND", "close"},
      {"OMP_PLACES", c.smt ? "threads" : "cores"},
      // Intel OpenMP (oneDNN/TensorFlow builds): the same pinning, and short spin-waits so the
      // threads of one rank do not steal cycles from communication.
      {"KMP_AFFINITY", c.smt ? "granularity=fine,compact,0,0" : "granularity=fine,compact,1,0"},
      {"KMP_BLOCKTIME", "1"},
      // Framework thread pools: PyTorch reads OMP_NUM_THREADS; TensorFlow these two.
      {"TF_NUM_INTRAOP_THREADS", threads},
      {"TF_NUM_INTEROP_THREADS", "1"},
      {"HOROVOD_FUSION_THRESHOLD", std::to_string(static_cast<long long>(c.fusion_bytes))},
  };
}

std::vector<std::string> mpirun_arguments(const model::TrainingConfiguration& c, const model::MachineRates& rates) {
  const auto placement = model::place(c, rates);
  const int cores_per_process = placement ? placement->cores_per_process : c.threads_per_process;
  const int ranks = c.processes_per_node * c.nodes;
  std::vector<std::string> arguments = {"mpirun", "-np", std::to_string(ranks)};
  // Ranks wider than a socket are mapped per node; place() refused any other straddling.
  const std::string map_by =
      open_mpi_map_by(c.processes_per_node, cores_per_process, rates.packages, rates.cores_per_package);
  arguments.insert(arguments.end(), {"--map-by", map_by,
                                     "--bind-to", "core", "--report-bindings"});
  for (const auto& [name, value] : launch_environment(c)) arguments.insert(arguments.end(), {"-x", name + "=" + value});
  return arguments;
}

std::string mpirun_command_line(const model::TrainingConfiguration& configuration, const model::MachineRates& rates,
                                const JobScriptOptions& options) {
  const std::string line = shell_command_line(mpirun_arguments(configuration, rates));
  const std::string command = command_text(options);
  return line + " " + (command.empty() ? "YOUR_TRAINING_COMMAND" : command);
}

std::string mpirun_text(const model::Prediction& prediction, const model::MachineRates& rates,
                        const JobScriptOptions& options) {
  return summary_comment(prediction) + mpirun_command_line(prediction.configuration, rates, options) + "\n";
}

std::string slurm_script(const model::Prediction& prediction, const model::MachineRates& rates,
                         const JobScriptOptions& options) {
  const model::TrainingConfiguration& c = prediction.configuration;
  const auto placement = model::place(c, rates);
  const int cores_per_process = placement ? placement->cores_per_process : c.threads_per_process;
  // With --hint=multithread a "CPU" is a hardware thread, with nomultithread a core.
  const int cpus_per_task = c.smt ? cores_per_process * rates.pus_per_core : cores_per_process;
  std::ostringstream out;
  out << "#!/bin/bash\n"
      << "#SBATCH --job-name=" << job_name_text(options.job_name) << "\n"
      << "#SBATCH --nodes=" << c.nodes << "\n"
      << "#SBATCH --ntasks-per-node=" << c.processes_per_node << "\n"
      << "#SBATCH --cpus-per-task=" << cpus_per_task << "\n"
      << "#SBATCH --hint=" << (c.smt ? "multithread" : "nomultithread") << "\n"
      << "#SBATCH --exclusive\n"
      << "#SBATCH --time=" << options.time_limit << "\n"
      << summary_comment(prediction)
      << "# Each task gets " << cores_per_process << " core(s) of its own; " << c.threads_per_process
      << " thread(s) per task" << (c.smt ? " on their SMT siblings" : ", one per core") << ".\n"
      << "set -euo pipefail\n\n";
  for (const auto& [name, value] : launch_environment(c)) out << "export " << name << "=" << value << "\n";
  out << "# Open MPI inside the allocation, if the command uses it without srun:\n"
      << "export OMPI_MCA_hwloc_base_binding_policy=core\n\n"
      // Since Slurm 22.05 srun no longer inherits --cpus-per-task from sbatch: pass it on.
      // block:cyclic fills nodes rank by rank and deals the ranks round-robin over the sockets,
      // each rank's cores from one socket: ceil(ppn/S) ranks on a socket, as the model and the
      // mpirun line place them. block:block would pack 2 ranks of 14 cores onto one of two
      // 28-core sockets, sharing one socket's memory bandwidth the prediction gave to each.
      << "srun --cpus-per-task=\"$SLURM_CPUS_PER_TASK\" --cpu-bind=cores --distribution=block:cyclic ";
  const std::string command = command_text(options);
  if (command.empty())
    out << "\\\n    true  # put your training command here, e.g.: python train.py --batch-size "
        << c.batch_per_process << "\n";
  else
    out << command << "\n";
  return out.str();
}

}  // namespace dnntune::tuner
