// tuner/job_script.hpp — turning a recommended configuration into something that runs: the
// environment (OpenMP, Intel OpenMP, framework threads, Horovod fusion), the launch line with
// the binding that gives each rank its own cores (mpirun or srun), and a complete SLURM batch
// script. The binding is the point: the default Open MPI binding (one core per rank) starves
// multi-threaded ranks, and a wrong OMP_NUM_THREADS oversubscribes them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/machine_rates.hpp"
#include "model/predictor.hpp"

namespace dnntune::tuner {

struct JobScriptOptions {
  std::string job_name = "dnntune";
  std::vector<std::string> train_command;  // the user's training command; empty: a placeholder
  std::string time_limit = "02:00:00";
};

// NAME=VALUE pairs every rank needs, in a fixed order.
std::vector<std::pair<std::string, std::string>> launch_environment(const model::TrainingConfiguration& configuration);

// The mpirun argument list (without the command), e.g.
// mpirun -np 4 --map-by ppr:2:socket:PE=14 --bind-to core -x OMP_NUM_THREADS ...
std::vector<std::string> mpirun_arguments(const model::TrainingConfiguration& configuration,
                                          const model::MachineRates& rates);

// The launch line: mpirun, its binding and environment, then the training command.
std::string mpirun_command_line(const model::TrainingConfiguration& configuration, const model::MachineRates& rates,
                                const JobScriptOptions& options);

// `--format mpirun`: a comment with the prediction, then the launch line.
std::string mpirun_text(const model::Prediction& prediction, const model::MachineRates& rates,
                        const JobScriptOptions& options);

// `--format slurm`: a complete sbatch script launching with srun --cpu-bind=cores.
std::string slurm_script(const model::Prediction& prediction, const model::MachineRates& rates,
                         const JobScriptOptions& options);

}  // namespace dnntune::tuner
