// cli/launch_options.cpp — see launch_options.hpp.
#include "cli/launch_options.hpp"

#include <filesystem>
#include <fstream>
#include <regex>

namespace dnntune::cli {
namespace {

// The OpenMP runtime this process's libtorch loaded: the framework users train with on this
// machine links the same one (Debian's and pip's PyTorch: GNU; Intel builds: libiomp5).
tuner::OpenMpRuntime loaded_openmp_runtime() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  bool gnu = false, intel = false;
  while (std::getline(maps, line)) {
    intel = intel || line.find("libiomp5") != std::string::npos;
    gnu = gnu || line.find("libgomp") != std::string::npos;
  }
  return intel ? tuner::OpenMpRuntime::intel : gnu ? tuner::OpenMpRuntime::gnu : tuner::OpenMpRuntime::unknown;
}

// The first of `names` in the library directories Debian and most distributions use.
std::string installed_library(std::initializer_list<const char*> names) {
  for (const char* directory : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"})
    for (const char* name : names)
      if (std::filesystem::exists(std::string(directory) + "/" + name)) return std::string(directory) + "/" + name;
  return "";
}

Expected<std::vector<std::pair<std::string, std::string>>> allocator_environment(const std::string& allocator) {
  if (allocator == "default") return std::vector<std::pair<std::string, std::string>>{};
  if (allocator == "glibc-tuned")
    // glibc's malloc keeping freed memory instead of returning it (each fresh buffer was a new
    // mmap, first-touched page by page: 110 ms for a 26 MB activation on the project's VMs).
    return std::vector<std::pair<std::string, std::string>>{{"MALLOC_MMAP_THRESHOLD_", "1073741824"},
                                                            {"MALLOC_TRIM_THRESHOLD_", "4294967295"}};
  const bool jemalloc = allocator == "jemalloc";
  const std::string library = jemalloc ? installed_library({"libjemalloc.so.2", "libjemalloc.so"})
                                       : installed_library({"libtcmalloc_minimal.so.4", "libtcmalloc.so.4"});
  if (library.empty())
    return bad_input("--allocator " + allocator + ": not installed on this machine (Debian: apt-get install " +
                     (jemalloc ? "libjemalloc2" : "libtcmalloc-minimal4") + ")");
  return std::vector<std::pair<std::string, std::string>>{{"LD_PRELOAD", library}};
}

}  // namespace

void add_launch_options(CLI::App& command, LaunchOptions& options) {
  command.add_option("--time", options.time_limit,
                     "SLURM --time (default: the predicted time to train --epochs, +25% and 10 minutes)")
      ->option_text("[D-]HH:MM:SS");
  command.add_option("--partition", options.partition, "SLURM partition")->option_text("NAME");
  command.add_option("--account", options.account, "SLURM account")->option_text("NAME");
  command.add_option("--openmp", options.openmp,
                     "The OpenMP runtime of your framework, for its variables: gnu (libgomp: Debian's and pip's "
                     "PyTorch), intel (libiomp5) or auto (the one this dnntune's libtorch loaded)")
      ->check(CLI::IsMember({"auto", "gnu", "intel"}))
      ->capture_default_str();
  command.add_option("--allocator", options.allocator,
                     "The memory allocator every rank loads: default, glibc-tuned (freed memory kept), jemalloc or "
                     "tcmalloc (LD_PRELOAD of the installed library)")
      ->check(CLI::IsMember({"default", "glibc-tuned", "jemalloc", "tcmalloc"}))
      ->capture_default_str();
}

Expected<tuner::JobScriptOptions> job_script_options(const LaunchOptions& options, const std::string& network_name,
                                                     double seconds_to_train) {
  tuner::JobScriptOptions job;
  static const std::regex slurm_time(R"((\d+-)?\d{1,2}(:\d{2}){0,2}|\d+)");
  static const std::regex slurm_name(R"([A-Za-z0-9._+-]+)");
  if (!options.time_limit.empty() && !std::regex_match(options.time_limit, slurm_time))
    return bad_input("--time " + options.time_limit + ": expected MINUTES, HH:MM:SS or D-HH:MM:SS");
  for (const auto& [flag, value] : {std::pair{"--partition", &options.partition}, {"--account", &options.account}})
    if (!value->empty() && !std::regex_match(*value, slurm_name))
      return bad_input(std::string(flag) + " \"" + *value + "\": letters, digits and ._+- only");
  if (options.time_limit.empty() && !(seconds_to_train > 0 && std::isfinite(seconds_to_train)))
    return bad_input("cannot derive --time from the prediction: give --time");
  job.time_limit = options.time_limit.empty() ? tuner::slurm_time_limit(seconds_to_train) : options.time_limit;
  job.partition = options.partition;
  job.account = options.account;
  // The job name comes from a network file: only the characters SLURM and a shell take as they are.
  job.job_name = "dnntune-" + network_name;
  for (char& character : job.job_name)
    if (!std::regex_match(std::string(1, character), slurm_name)) character = '_';
  job.openmp = options.openmp == "gnu"     ? tuner::OpenMpRuntime::gnu
               : options.openmp == "intel" ? tuner::OpenMpRuntime::intel
                                           : loaded_openmp_runtime();
  auto allocator = allocator_environment(options.allocator);
  if (!allocator) return allocator.error();
  job.allocator_environment = *allocator;
  return job;
}

}  // namespace dnntune::cli
