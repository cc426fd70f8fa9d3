// tuner/job_script.hpp — turning a recommended configuration into something that runs: the
// environment (the OpenMP runtime's variables, framework threads, Horovod fusion, the memory
// allocator), the launch line with the binding that gives each rank its own cores (mpirun,
// srun or torchrun), torch.distributed's variables for every rank, and a complete SLURM batch
// script. The binding is the point: the default Open MPI binding (one core per rank) starves
// multi-threaded ranks, torchrun binds nothing, and a wrong OMP_NUM_THREADS oversubscribes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/gpu_predictor.hpp"
#include "model/machine_rates.hpp"
#include "model/predictor.hpp"

namespace dnntune::tuner {

// Which OpenMP runtime the user's framework links: GNU's (libgomp: Debian's and pip's PyTorch)
// reads only OMP_*; Intel's (libiomp5: IPEX, conda/MKL builds) also KMP_*. Unknown: both sets.
enum class OpenMpRuntime { unknown, gnu, intel };

struct JobScriptOptions {
  std::string job_name = "dnntune";        // refused if it holds characters outside [A-Za-z0-9._+-]
  std::vector<std::string> train_command;  // the user's training command; empty: a placeholder
  std::string time_limit = "02:00:00";     // SLURM's --time
  bool requeue = false;                    // the training outlasts the time limit (sbatch_header.hpp)
  std::string time_comment;                // "# ..." lines on the limit (job_time), or empty
  std::string time_note;                   // one line for the user when --time was capped (job_time), or empty
  std::string partition;                   // empty: the cluster's default
  std::string account;
  OpenMpRuntime openmp = OpenMpRuntime::unknown;
  // The allocator every rank loads: NAME=VALUE pairs (LD_PRELOAD, MALLOC_*), empty for the default.
  std::vector<std::pair<std::string, std::string>> allocator_environment;
  std::string allocator_note;  // which allocator and why, a comment line of the script (empty: none)
  std::string allocator_name;  // the variant allocator_environment loads, for the job's record (DNNTUNE_ALLOCATOR)
  // What the training job's record carries (python/dnntune/observe.py): the network and the images/s
  // predicted for this setup before the job. mpirun_text, torchrun_text and slurm_script set them
  // from their prediction; empty / 0: not set.
  std::string network;
  double predicted_images_per_second = 0;
};

// NAME=VALUE pairs every rank needs, in a fixed order; with the options' network, also what the
// hook dnntune.observe records: DNNTUNE_NETWORK, DNNTUNE_PREDICTED_IMAGES_PER_SECOND, under an
// allocator DNNTUNE_ALLOCATOR (its name), and over nodes DNNTUNE_FABRIC (the configuration's fabric).
std::vector<std::pair<std::string, std::string>> launch_environment(const model::TrainingConfiguration& configuration,
                                                                    const JobScriptOptions& options = {});

// The mpirun argument list (without the command), e.g.
// mpirun -np 4 --map-by ppr:2:socket:PE=14 --bind-to core -x OMP_NUM_THREADS ...
std::vector<std::string> mpirun_arguments(const model::TrainingConfiguration& configuration,
                                          const model::MachineRates& rates, const JobScriptOptions& options = {});

// The launch line: mpirun, its binding and environment, then the training command run with
// RANK, LOCAL_RANK and WORLD_SIZE taken from Open MPI's.
std::string mpirun_command_line(const model::TrainingConfiguration& configuration, const model::MachineRates& rates,
                                const JobScriptOptions& options);

// `--format mpirun`: a comment with the prediction, MASTER_ADDR/PORT, then the launch line.
std::string mpirun_text(const model::Prediction& prediction, const model::MachineRates& rates,
                        const JobScriptOptions& options);

// `--format torchrun`: what to run on each node: the environment, then torchrun with each
// worker bound to its own cores (torchrun binds nothing itself) and its memory local.
std::string torchrun_text(const model::Prediction& prediction, const model::MachineRates& rates,
                          const JobScriptOptions& options);

// `--format slurm`: a complete sbatch script launching with srun --cpu-bind=cores.
std::string slurm_script(const model::Prediction& prediction, const model::MachineRates& rates,
                         const JobScriptOptions& options);

// GPU machines: one process per GPU. What the pick asks of the training script, as variables it
// reads (DNNTUNE_PRECISION fp32|tf32|bf16|fp16, DNNTUNE_MEMORY_FORMAT contiguous|channels_last,
// DNNTUNE_BATCH_PER_PROCESS, DNNTUNE_DDP_BUCKET_MB), in a fixed order.
std::vector<std::pair<std::string, std::string>> gpu_training_environment(const model::GpuConfiguration& configuration);

// What the training script must set for this GPU pick (model::gpu_script_settings, for its GPU),
// and how each rank finds its GPU and joins DDP over NCCL: "# " comment lines.
std::string gpu_script_settings_comment(const model::GpuPrediction& prediction);

// `--format slurm` on a GPU machine: a complete sbatch script, one task per GPU (--ntasks-per-node
// and --gres=gpu:N the pick's GPUs per node), the node's CPUs shared evenly by its tasks at run
// time (a GPU profile does not name its host's cores), the settings above, srun.
std::string gpu_slurm_script(const model::GpuPrediction& prediction, const JobScriptOptions& options);

// `--format torchrun` on a GPU machine: the variables, then torchrun with one worker per GPU on each node.
std::string gpu_torchrun_text(const model::GpuPrediction& prediction, const JobScriptOptions& options);

// The one rule for words that reach #SBATCH lines and paths (--partition, --account): SLURM's
// own characters, letters, digits and ._+- ("." and ".." refused); `option` names the flag in
// the one-line error.
Expected<void> check_slurm_name(const std::string& option, const std::string& value);
// --time as SLURM takes it: MINUTES, MM:SS, HH:MM:SS or D-HH[:MM[:SS]].
Expected<void> check_slurm_time(const std::string& value);

}  // namespace dnntune::tuner
