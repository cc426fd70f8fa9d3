// cli/launch_options.hpp — the options of the launch lines and job scripts `recommend` emits
// (--time, --partition, --account, --openmp, --allocator): their rows added to a command, and
// what the machine and SLURM say (its OpenMP runtime, its allocators, sinfo's time limit)
// gathered for the launch policy (tuner/launch_policy.hpp), which decides.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "common/expected.hpp"
#include "tuner/allocator_choice.hpp"
#include "tuner/job_script.hpp"
#include "tuner/launch_policy.hpp"

namespace dnntune::cli {

using LaunchOptions = tuner::LaunchRequest;
void add_launch_options(CLI::App& command, LaunchOptions& options);
// --allocator alone (predict and scale: the setup's allocator; empty: the one recommended).
CLI::Option* add_allocator_option(CLI::App& command, std::string& allocator);

// --allocator, when given, is refused unless this node can load it (pipeline/installed_allocators.hpp;
// checked before anything is calibrated).
Expected<void> check_allocator(const LaunchOptions& options);
// tuner::check_launch_request and check_allocator: before any work starts.
Expected<void> check_launch_options(const LaunchOptions& options);

// The job script options for `network_name` (tuner::job_script_options), with `seconds_to_train`
// giving the default --time, every rank loading `allocator` (the chosen variant). A --time capped
// below the predicted training is in its time_note, which the caller says where it writes a script.
Expected<tuner::JobScriptOptions> job_script_options(const LaunchOptions& options, const std::string& network_name,
                                                     double seconds_to_train, const std::string& allocator);

}  // namespace dnntune::cli
