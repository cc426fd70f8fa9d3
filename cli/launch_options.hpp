// cli/launch_options.hpp — the options of the launch lines and job scripts `recommend` emits
// (--time, --partition, --account, --openmp, --allocator), checked at the boundary: every text
// that reaches a generated script is refused unless it is made of characters that need no
// quoting, and what the machine has (its OpenMP runtime, its allocators) is looked up here.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "common/expected.hpp"
#include "tuner/allocator_choice.hpp"
#include "tuner/job_script.hpp"

namespace dnntune::cli {

struct LaunchOptions {
  std::string time_limit;    // empty: derived from the predicted time to train
  std::string partition;
  std::string account;
  std::string openmp = "auto";
  std::string allocator;      // --allocator; empty: the one recommended (tuner/allocator_choice.hpp)
};
void add_launch_options(CLI::App& command, LaunchOptions& options);
// --allocator alone (predict and scale: the setup's allocator; empty: the one recommended).
CLI::Option* add_allocator_option(CLI::App& command, std::string& allocator);

// --allocator, when given, is refused unless this node can load it (pipeline/installed_allocators.hpp;
// checked before anything is calibrated).
Expected<void> check_allocator(const LaunchOptions& options);
// --time, --partition and --account as SLURM takes them (tuner::check_slurm_time and
// check_slurm_name), checked before any work starts.
Expected<void> check_launch_options(const LaunchOptions& options);

// The job script options for `network_name`, with `seconds_to_train` giving the default --time,
// every rank loading `allocator` (the chosen variant).
Expected<tuner::JobScriptOptions> job_script_options(const LaunchOptions& options, const std::string& network_name,
                                                     double seconds_to_train, const std::string& allocator);

}  // namespace dnntune::cli
