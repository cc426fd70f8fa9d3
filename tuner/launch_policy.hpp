// tuner/launch_policy.hpp — what a job script and a launch line are launched with, decided once
// for the command and the library: the job's --time (given, or the predicted training within
// what the partition allows: sbatch_header.hpp's job_time), the partition and account as SLURM
// takes them, the OpenMP runtime whose variables the script sets, and the allocator's
// environment. Pure: what the machine and SLURM say (sinfo's limit, the runtime this process
// loaded, the allocator's variables) comes in as LaunchFacts, gathered by the caller.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/expected.hpp"
#include "tuner/job_script.hpp"

namespace dnntune::tuner {

// What the user asked of the launch (--time, --partition, --account, --openmp, --allocator).
struct LaunchRequest {
  std::string time_limit;       // empty: derived from the predicted time to train
  std::string partition;        // empty: the cluster's default
  std::string account;          // empty: the user's default
  std::string openmp = "auto";  // a name in openmp_runtime_names()
  std::string allocator;        // empty: the one recommended (allocator_choice.hpp)
};

// --openmp's names: "auto" (the runtime this dnntune's libtorch loaded), "gnu", "intel".
const std::vector<std::string>& openmp_runtime_names();

// --time, --partition and --account as SLURM takes them (check_slurm_time, check_slurm_name),
// and --openmp among its names: refused before any work starts.
Expected<void> check_launch_request(const LaunchRequest& request);

// What the caller found out for the launch.
struct LaunchFacts {
  // sinfo's limit of the request's partition (partition_time_limit_seconds): nullopt when SLURM
  // cannot say, infinity when it says UNLIMITED.
  std::optional<double> partition_limit_seconds;
  OpenMpRuntime loaded_openmp = OpenMpRuntime::unknown;  // what "auto" means on this machine
  // The chosen allocator's NAME=VALUE pairs (LD_PRELOAD, MALLOC_*), empty for the default.
  std::vector<std::pair<std::string, std::string>> allocator_environment;
};

// The job script options for `network_name`: `seconds_to_train` gives --time when the request
// has none (refused when it is not a positive number: the prediction cannot give one).
Expected<JobScriptOptions> job_script_options(const LaunchRequest& request, const std::string& network_name,
                                              double seconds_to_train, const LaunchFacts& facts);

}  // namespace dnntune::tuner
