// cli/launch_options.cpp — see launch_options.hpp.
#include "cli/launch_options.hpp"

#include <cmath>


#include "frontend/partition_calibration.hpp"
#include "cli/option_table.hpp"
#include "probe/allocators.hpp"
#include "tuner/sbatch_header.hpp"

namespace dnntune::cli {
namespace {

// The OpenMP runtime this process's libtorch loaded: the framework users train with on this
// machine links the same one (Debian's and pip's PyTorch: GNU; Intel builds: libiomp5).
tuner::OpenMpRuntime loaded_openmp_runtime() {
  if (probe::this_process_maps("libiomp5")) return tuner::OpenMpRuntime::intel;
  return probe::this_process_maps("libgomp") ? tuner::OpenMpRuntime::gnu : tuner::OpenMpRuntime::unknown;
}

}  // namespace

void add_launch_options(CLI::App& command, LaunchOptions& options) {
  add_value(command, option_rows::time_limit, options.time_limit);
  add_value(command, option_rows::partition, options.partition);
  add_value(command, option_rows::account, options.account);
  add_value(command, option_rows::openmp, options.openmp)
      ->check(CLI::IsMember({"auto", "gnu", "intel"}))
      ->capture_default_str();
  add_allocator_option(command, options.allocator);
}

CLI::Option* add_allocator_option(CLI::App& command, std::string& allocator) {
  return add_value(command, option_rows::allocator, allocator)
      // Checked against what is installed (check_allocator), the one list of them; empty means
      // "not given" inside, so it is refused here.
      ->check(CLI::Validator([](std::string& name) { return name.empty() ? std::string("an allocator name") : ""; },
                             "NAME"));
}

Expected<void> check_allocator(const LaunchOptions& options) {
  if (options.allocator.empty()) return {};
  if (auto allocator = probe::allocator_variant(options.allocator); !allocator)
    return bad_input("--allocator: " + allocator.error().message);
  return {};
}

Expected<void> check_launch_options(const LaunchOptions& options) {
  if (!options.time_limit.empty())
    if (auto checked = tuner::check_slurm_time(options.time_limit); !checked) return checked.error();
  for (const auto& [flag, value] : {std::pair{"--partition", &options.partition}, {"--account", &options.account}})
    if (!value->empty())
      if (auto checked = tuner::check_slurm_name(flag, *value); !checked) return checked.error();
  return check_allocator(options);
}

Expected<tuner::JobScriptOptions> job_script_options(const LaunchOptions& options, const std::string& network_name,
                                                     double seconds_to_train, const std::string& allocator_name) {
  tuner::JobScriptOptions job;
  if (!options.time_limit.empty())
    if (auto checked = tuner::check_slurm_time(options.time_limit); !checked) return checked.error();
  for (const auto& [flag, value] : {std::pair{"--partition", &options.partition}, {"--account", &options.account}})
    if (!value->empty())
      if (auto checked = tuner::check_slurm_name(flag, *value); !checked) return checked.error();
  if (options.time_limit.empty() && !(seconds_to_train > 0 && std::isfinite(seconds_to_train)))
    return bad_input("cannot derive --time from the prediction: give --time");
  if (options.time_limit.empty()) {
    // Within what the partition allows (sinfo's limit, else the stated default), and when the
    // training is longer, the script says so and asks to be requeued.
    const auto time = tuner::job_time(seconds_to_train, frontend::partition_time_limit_seconds(options.partition),
                                      options.partition);
    job.time_limit = time.time_limit;
    job.requeue = time.requeue;
    job.time_comment = time.comment;
  } else {
    job.time_limit = options.time_limit;
  }
  job.partition = options.partition;
  job.account = options.account;
  job.job_name = "dnntune-" + network_name;  // the script keeps only the characters SLURM and a shell take
  job.openmp = options.openmp == "gnu"     ? tuner::OpenMpRuntime::gnu
               : options.openmp == "intel" ? tuner::OpenMpRuntime::intel
                                           : loaded_openmp_runtime();
  auto allocator = probe::allocator_variant(allocator_name);
  if (!allocator) return bad_input("--allocator: " + allocator.error().message);
  job.allocator_environment = allocator->environment;
  job.allocator_name = allocator->name;
  return job;
}

}  // namespace dnntune::cli
