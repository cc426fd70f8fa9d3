// tuner/launch_policy.cpp — see launch_policy.hpp.
#include "tuner/launch_policy.hpp"

#include <algorithm>
#include <cmath>

#include "tuner/sbatch_header.hpp"

namespace dnntune::tuner {

const std::vector<std::string>& openmp_runtime_names() {
  static const std::vector<std::string> names{"auto", "gnu", "intel"};
  return names;
}

Expected<void> check_launch_request(const LaunchRequest& request) {
  if (!request.time_limit.empty())
    if (auto checked = check_slurm_time(request.time_limit); !checked) return checked.error();
  for (const auto& [flag, value] : {std::pair{"--partition", &request.partition}, {"--account", &request.account}})
    if (!value->empty())
      if (auto checked = check_slurm_name(flag, *value); !checked) return checked.error();
  const auto& names = openmp_runtime_names();
  if (std::find(names.begin(), names.end(), request.openmp) == names.end())
    return bad_input("--openmp \"" + request.openmp + "\": auto, gnu or intel");
  return {};
}

Expected<JobScriptOptions> job_script_options(const LaunchRequest& request, const std::string& network_name,
                                              double seconds_to_train, const LaunchFacts& facts) {
  if (auto checked = check_launch_request(request); !checked) return checked.error();
  JobScriptOptions job;
  if (request.time_limit.empty()) {
    if (!(seconds_to_train > 0 && std::isfinite(seconds_to_train)))
      return bad_input("cannot derive --time from the prediction: give --time");
    // Within what the partition allows (sinfo's limit, else the stated default); a longer
    // training is said in the script and asks to be requeued.
    const JobTime time = job_time(seconds_to_train, facts.partition_limit_seconds, request.partition);
    job.time_limit = time.time_limit;
    job.requeue = time.requeue;
    job.time_comment = time.comment;
    job.time_note = time.note;
  } else {
    job.time_limit = request.time_limit;
  }
  job.partition = request.partition;
  job.account = request.account;
  job.job_name = "dnntune-" + network_name;  // the script keeps only the characters SLURM and a shell take
  job.openmp = request.openmp == "gnu"     ? OpenMpRuntime::gnu
               : request.openmp == "intel" ? OpenMpRuntime::intel
                                           : facts.loaded_openmp;
  job.allocator_environment = facts.allocator_environment;
  return job;
}

}  // namespace dnntune::tuner
