// tuner/sbatch_header.cpp — see sbatch_header.hpp.
#include "tuner/sbatch_header.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
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

// "170 days 5 hours", "3 hours 20 minutes": a duration a reader takes in at a glance; past a
// century, in years ("4.1e+09 years"), which whole minutes in a long could not hold.
std::string readable_duration(double seconds) {
  seconds = std::isnan(seconds) ? 0 : std::max(0.0, seconds);
  if (std::isinf(seconds)) return "an unbounded time (the prediction states no finite rate)";
  if (seconds > 36500.0 * 86400) {
    char text[40];
    std::snprintf(text, sizeof text, "%.2g years", seconds / (365.25 * 86400));
    return text;
  }
  const long minutes = static_cast<long>(std::ceil(seconds / 60));
  const long days = minutes / 1440, hours = minutes % 1440 / 60, rest = minutes % 60;
  if (days > 0) return std::to_string(days) + " days " + std::to_string(hours) + " hours";
  if (hours > 0) return std::to_string(hours) + " hours " + std::to_string(rest) + " minutes";
  return std::to_string(rest) + " minutes";
}

// A duration as SLURM's --time when SLURM can hold it, else as a reader would say it.
std::string stated_duration(double seconds) {
  return seconds <= longest_slurm_time_seconds ? slurm_duration(seconds) : readable_duration(seconds);
}

// A text that SLURM expands in #SBATCH --output/--error (%j, %N, %u ...) written so that it
// stays what it says: "%%" is SLURM's literal '%'.
std::string slurm_pattern_text(const std::string& text) {
  std::string escaped;
  for (const char character : text) escaped += character == '%' ? std::string("%%") : std::string(1, character);
  return escaped;
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
  if (!header.output.empty()) out << "#SBATCH --output=" << slurm_pattern_text(header.output) << "\n";
  return out.str();
}

std::string slurm_duration(double seconds) {
  // Clamped before the conversion: a double past a long's range (an overflowing prediction) has
  // no defined conversion, and SLURM holds no longer time anyway.
  const double bounded = std::isnan(seconds) ? 0 : std::clamp(seconds, 0.0, longest_slurm_time_seconds);
  const long total = static_cast<long>(std::llround(bounded));
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
  if (match[1].matched)                                        // D-HH, D-HH:MM, D-HH:MM:SS
    return number(1) * 86400 + number(2) * 3600 + number(3) * 60 + number(4);
  if (fields == 1) return number(2) * 60;                // MINUTES
  if (fields == 2) return number(2) * 60 + number(3);    // MM:SS
  return number(2) * 3600 + number(3) * 60 + number(4);  // HH:MM:SS
}

JobTime job_time(double seconds_to_train, std::optional<double> partition_limit_seconds, const std::string& partition) {
  // The margin: 25% for the band and a slow node, 10 minutes for start-up and the last checkpoint.
  // In doubles throughout (an overflowing prediction is a large double, never a wrapped integer);
  // a time that is not a number counts as longer than any limit.
  const double training =
      std::isnan(seconds_to_train) ? std::numeric_limits<double>::infinity() : std::max(0.0, seconds_to_train);
  const double wanted = std::ceil(training * 1.25 / 60.0) * 60 + 600;
  const std::string named = "partition " + (partition.empty() ? std::string("(default)") : partition);
  // sinfo's MaxTime when it states one; UNLIMITED, or no answer, takes the stated default.
  const bool partition_limited =
      partition_limit_seconds && std::isfinite(*partition_limit_seconds) && *partition_limit_seconds > 0;
  const double limit = partition_limited ? std::min(*partition_limit_seconds, longest_slurm_time_seconds)
                                         : default_slurm_time_limit_seconds;
  const std::string whose = partition_limited ? "the time limit of " + named + " (sinfo)"
                            : partition_limit_seconds
                                ? "dnntune's default limit (" + named + " has none: sinfo says UNLIMITED)"
                                : "dnntune's default limit (sinfo could not say what the partition allows)";
  JobTime time;
  if (wanted <= limit) {
    time.time_limit = slurm_duration(wanted);
    time.comment =
        "# --time: the predicted training, +25% and 10 minutes, within " + whose + ", " + slurm_duration(limit) + "\n";
    return time;
  }
  // Whole minutes below the limit: SLURM rounds a job's time up to minutes.
  time.time_limit = slurm_duration(std::floor(limit / 60) * 60);
  time.requeue = true;
  time.capped = true;
  time.comment = "# --time: the whole training takes about " + readable_duration(training) + " (" +
                 stated_duration(wanted) + " with the margin), longer than " + whose + ", " + slurm_duration(limit) +
                 ".\n# It must checkpoint and resume from its checkpoint: --requeue lets the job be requeued "
                 "(`scontrol requeue $SLURM_JOB_ID` after a checkpoint) or resubmit it until the training is done.\n";
  time.note = "the predicted training (about " + readable_duration(training) + ") is longer than " + whose +
              ": --time capped at " + time.time_limit +
              ", with --requeue (the script says so; the training must "
              "checkpoint)";
  return time;
}

}  // namespace dnntune::tuner
