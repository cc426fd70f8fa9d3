// cli/launch_options.cpp — see launch_options.hpp.
#include "cli/launch_options.hpp"

#include "cli/model_options.hpp"
#include "cli/option_table.hpp"
#include "frontend/partition_calibration.hpp"
#include "probe/allocators.hpp"

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
      ->check(CLI::IsMember(tuner::openmp_runtime_names()))
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
    return bad_input(long_name(option_rows::allocator) + ": " + allocator.error().message);
  return {};
}

Expected<void> check_launch_options(const LaunchOptions& options) {
  if (auto checked = tuner::check_launch_request(options); !checked) return checked.error();
  return check_allocator(options);
}

Expected<tuner::JobScriptOptions> job_script_options(const LaunchOptions& options, const std::string& network_name,
                                                     double seconds_to_train, const std::string& allocator_name) {
  tuner::LaunchFacts facts;
  if (options.time_limit.empty())
    facts.partition_limit_seconds = frontend::partition_time_limit_seconds(options.partition);
  facts.loaded_openmp = loaded_openmp_runtime();
  auto allocator = probe::allocator_variant(allocator_name);
  if (!allocator) return bad_input(long_name(option_rows::allocator) + ": " + allocator.error().message);
  facts.allocator_environment = allocator->environment;
  auto job = tuner::job_script_options(options, network_name, seconds_to_train, facts);
  if (job) job->allocator_name = allocator->name;
  return job;
}

}  // namespace dnntune::cli
