// cli/launch_options.hpp — the options of the launch lines and job scripts `recommend` emits
// (--time, --partition, --account, --openmp, --allocator), checked at the boundary: every text
// that reaches a generated script is refused unless it is made of characters that need no
// quoting, and what the machine has (its OpenMP runtime, its allocators) is looked up here.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "common/expected.hpp"
#include "tuner/job_script.hpp"

namespace dnntune::cli {

struct LaunchOptions {
  std::string time_limit;    // empty: derived from the predicted time to train
  std::string partition;
  std::string account;
  std::string openmp = "auto";
  std::string allocator = "default";
};
void add_launch_options(CLI::App& command, LaunchOptions& options);

// The job script options for `network_name`, with `seconds_to_train` giving the default --time.
Expected<tuner::JobScriptOptions> job_script_options(const LaunchOptions& options, const std::string& network_name,
                                                     double seconds_to_train);

}  // namespace dnntune::cli
