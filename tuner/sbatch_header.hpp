// tuner/sbatch_header.hpp — the one writer of `#SBATCH` lines, for the training job scripts
// (job_script.hpp) and the calibration jobs `calibrate --slurm` submits, and the one rule for a
// job's --time: what the training needs (+25% and 10 minutes), within what the partition allows
// (sinfo's limit, passed in: this library runs no command; else a stated default). A training
// longer than the limit gets --requeue and a comment saying it must checkpoint.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace dnntune::tuner {

struct SbatchHeader {
  std::string job_name;    // characters outside [A-Za-z0-9._-] become '_'
  int nodes = 0;           // 0: not written
  int tasks_per_node = 0;  // 0: not written
  int cpus_per_task = 0;   // 0: not written
  int gpus_per_node = 0;   // --gres=gpu:N (GRES, which every GPU cluster's SLURM has); 0: not written
  std::string hint;        // "multithread" or "nomultithread"; "": not written
  bool exclusive = true;
  std::string time_limit;  // D-HH:MM:SS; "": not written
  bool requeue = false;    // the job may be requeued (a training longer than one job)
  std::string partition;   // "": the cluster's default
  std::string account;     // "": the user's default
  std::string output;      // the log file ('%' written as SLURM's literal "%%"); "": SLURM's default
};

// "#!/bin/bash" and the #SBATCH lines, in one fixed order.
std::string sbatch_header(const SbatchHeader& header);

// The time limit a script states when SLURM cannot say what the partition allows, or says it
// allows any time (UNLIMITED): a job of a day is one a scheduler starts, and one that checkpoints
// loses at most a day of work.
constexpr double default_slurm_time_limit_seconds = 24 * 3600;
// The longest time SLURM holds: its limits are minutes in 32 bits, the highest meaning INFINITE.
constexpr double longest_slurm_time_seconds = (4294967295.0 - 1) * 60;

struct JobTime {
  std::string time_limit;  // SLURM's --time, D-HH:MM:SS
  bool requeue = false;    // the training is longer than the limit
  std::string comment;     // "# ..." lines on the limit and, when longer, the whole training
  bool capped = false;     // the limit is below what the training needs
  std::string note;        // when capped: one line for the user (standard error), else ""
};
// The --time for a job that trains `seconds_to_train`: 25% and 10 minutes of margin, at most
// `partition_limit_seconds` (sinfo's MaxTime; infinity (UNLIMITED) or nullopt (sinfo could not
// say): the stated default), in whole minutes. Any double is taken: a time past what SLURM holds
// (an overflowing product of epochs and images) is capped like any other, never wrapped.
JobTime job_time(double seconds_to_train, std::optional<double> partition_limit_seconds, const std::string& partition);

// SLURM's --time as D-HH:MM:SS, clamped to 0 .. longest_slurm_time_seconds.
std::string slurm_duration(double seconds);
// A time as sinfo and sbatch write it (MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS) in
// seconds; nullopt for "infinite", "UNLIMITED" or what does not parse.
std::optional<double> slurm_time_seconds(const std::string& text);

}  // namespace dnntune::tuner
