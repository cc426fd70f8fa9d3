// tuner/sbatch_header.cpp — see sbatch_header.hpp.
#include "tuner/sbatch_header.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>

namespace dnntune::tuner {
namespace {

// A SLURM job name as a script line carries it safely: letters, digits, '.', '_' and '-'; any
// other character becomes '_'.
std::string job_name_text(std::string name) {
  for (char& character : name)
    if (!std::isalnum(static_cast<unsigned char>(character)) && character != '.' && character != '_' &&
        character != '-')
      character = '_';
  return name;
}

// "170 days 5 hours", "3 hours 20 minutes": a duration a reader takes in at a glance.
std::string readable_duration(double seconds) {
  const long minutes = static_cast<long>(std::ceil(std::max(0.0, seconds) / 60));
  const long days = minutes / 1440, hours = minutes % 1440 / 60, rest = minutes % 60;
  if (days > 0) return std::to_string(days) + " days " + std::to_string(hours) + " hours";
  if (hours > 0) return std::to_string(hours) + " hours " + std::to_string(rest) + " minutes";
  return std::to_string(rest) + " minutes";
}

}  // namespace

std::string sbatch_header(const SbatchHeader& header) {
  std::ostringstream out;
  out << "#!/bin/bash\n#SBATCH --job-name=" << job_name_text(header.job_name) << "\n";
  if (header.nodes > 0) out << "#SBATCH --nodes=" << header.nodes << "\n";
  if (header.tasks_per_node > 0) out << "#SBATCH --ntasks-per-node=" << header.tasks_per_node << "\n";
  if (header.cpus_per_task > 0) out << "#SBATCH --cpus-per-task=" << header.cpus_per_task << "\n";
  if (header.gpus_per_node > 0) out << "#SBATCH --gres=gpu:" << header.gpus_per_node << "\n";
  if (!header.hint.empty()) out << "#SBATCH --hint=" << header.hint << "\n";
  if (header.exclusive) out << "#SBATCH --exclusive\n";
  if (!header.time_limit.empty()) out << "#SBATCH --time=" << header.time_limit << "\n";
  if (header.requeue) out << "#SBATCH --requeue\n";
  if (!header.partition.empty()) out << "#SBATCH --partition=" << header.partition << "\n";
  if (!header.account.empty()) out << "#SBATCH --account=" << header.account << "\n";
  if (!header.output.empty()) out << "#SBATCH --output=" << header.output << "\n";
  return out.str();
}

std::string slurm_duration(double seconds) {
  const long total = static_cast<long>(std::llround(std::max(0.0, seconds)));
  char text[40];
  std::snprintf(text, sizeof text, "%ld-%02ld:%02ld:%02ld", total / 86400, total % 86400 / 3600, total % 3600 / 60,
                total % 60);
  return text;
}

std::optional<double> slurm_time_seconds(const std::string& text) {
  static const std::regex form(R"((?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?)");
  std::smatch match;
  if (!std::regex_match(text, match, form)) return std::nullopt;
  const auto number = [&](int index) { return match[index].matched ? std::stod(match[index].str()) : 0.0; };
  const int fields = 1 + match[3].matched + match[4].matched;  // after the day
  if (match[1].matched)  // D-HH, D-HH:MM, D-HH:MM:SS
    return number(1) * 86400 + number(2) * 3600 + number(3) * 60 + number(4);
  if (fields == 1) return number(2) * 60;                            // MINUTES
  if (fields == 2) return number(2) * 60 + number(3);                // MM:SS
  return number(2) * 3600 + number(3) * 60 + number(4);              // HH:MM:SS
}

JobTime job_time(double seconds_to_train, std::optional<double> partition_limit_seconds,
                 const std::string& partition) {
  // The margin: 25% for the band and a slow node, 10 minutes for start-up and the last checkpoint.
  const double wanted = std::ceil(std::max(0.0, seconds_to_train) * 1.25 / 60.0) * 60 + 600;
  const double limit = partition_limit_seconds ? *partition_limit_seconds : default_slurm_time_limit_seconds;
  const std::string whose = partition_limit_seconds
                                ? "the time limit of partition " + (partition.empty() ? std::string("(default)") : partition) +
                                      " (sinfo)"
                                : "dnntune's default limit (sinfo could not say what the partition allows)";
  JobTime time;
  if (wanted <= limit) {
    time.time_limit = slurm_duration(wanted);
    time.comment = "# --time: the predicted training, +25% and 10 minutes, within " + whose + ", " +
                   (std::isfinite(limit) ? slurm_duration(limit) : std::string("none")) + "\n";
    return time;
  }
  // Whole minutes below the limit: SLURM rounds a job's time up to minutes.
  time.time_limit = slurm_duration(std::floor(limit / 60) * 60);
  time.requeue = true;
  time.comment = "# --time: the whole training takes about " + readable_duration(seconds_to_train) + " (" +
                 slurm_duration(wanted) + " with the margin), longer than " + whose + ", " + slurm_duration(limit) +
                 ".\n# It must checkpoint and resume from its checkpoint: --requeue lets the job be requeued "
                 "(`scontrol requeue $SLURM_JOB_ID` after a checkpoint) or resubmit it until the training is done.\n";
  return time;
}

}  // namespace dnntune::tuner
