// cli/comm_calibration.hpp — `dnntune calibrate --comm`: the communication half of calibration,
// run under a launcher (`mpirun -np 2 dnntune calibrate --comm`, `srun`). Times MPI all-reduce
// and point-to-point exchange over message sizes within a time budget, fits latency and
// bandwidth per scope (ranks of one node, across nodes), prints the fits and appends the
// measurements as records (kind communication). The calibrate command owns the flag; this file
// owns what it runs and the options it adds.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/command_support.hpp"
#include "train/comm/comm_sweep.hpp"

namespace dnntune::cli {

struct CommCalibrationOptions {
  // train::comm's defaults, written there once.
  double max_message_megabytes = static_cast<double>(train::comm::CommSweepOptions{}.max_message_bytes) / (1 << 20);
  double time_budget_seconds = train::comm::CommSweepOptions{}.time_budget_seconds;
  std::string record_path;  // append the records here ("" = none)
  OutputOptions output;     // the report: text, or --json; stdout or -o FILE
};

// Adds --comm-max-mb and --comm-budget to `command` (the calibrate command).
void add_comm_calibration_options(CLI::App& command, CommCalibrationOptions& options);

// Runs the calibration on every rank; rank 0 prints and records. Fails with bad input when no
// launcher started this process or the job has one rank.
void run_comm_calibration(const CommCalibrationOptions& options);

}  // namespace dnntune::cli
