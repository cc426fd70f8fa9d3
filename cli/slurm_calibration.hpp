// cli/slurm_calibration.hpp — calibrating the compute nodes of a SLURM partition from a login
// node, and answering from that calibration (`dnntune calibrate --slurm`, `recommend --partition`).
//
// `calibrate --slurm --partition P` submits one exclusive single-node job that runs this
// dnntune on a compute node of P: the probe, the layer micro-runs and the fit of the default
// calibration (pipeline/default_calibration.hpp), into the cache directory, which must be on a file
// system the compute nodes share (it is keyed by the node's fingerprint, as on any machine).
// When P has two nodes or more, a second job, after the first, sweeps all-reduce over two nodes
// (mpirun -np 2, one rank per node) and refits with the measured fabric. The job then records
// the node: CACHE/slurm/nodes/NODE.json ("dnntune.slurm-node" v1: node, partition, fingerprint,
// the calibration's path, the job). It waits with progress (squeue, the job's log), or with
// --no-wait returns and says how to pick the result up.
//
// `recommend --partition P` (and predict, scale) answers from the newest node record of P whose
// node sinfo lists in P (every record of P when sinfo is not there).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace dnntune::cli {

struct SlurmCalibrationRequest {
  std::string partition;
  std::string account;                 // "" : the user's default
  std::string time_limit = "01:00:00"; // per job
  std::vector<std::string> models;
  std::vector<std::int64_t> batches;
  std::string backend = "torch";
  double budget_seconds = 60;          // layer micro-runs on the node (the default calibration's)
  bool wait = true;
  double poll_seconds = 5;
};

// Checks the request (names that go into the job scripts, the networks), finds P's nodes with
// sinfo, submits the job(s) and, when asked, waits for them. Progress on standard error; the
// outcome (how to use it) on standard output.
Expected<void> calibrate_through_slurm(const SlurmCalibrationRequest& request);

// Inside the single-node job: calibrate this node into the cache and record it for `partition`.
Expected<void> run_slurm_node_job(const SlurmCalibrationRequest& request);
// Inside the two-node job, after the sweep in `comm_directory`: refit the node's calibration
// with the measured fabric and point P's node record at it.
Expected<void> refit_with_fabric(const std::string& partition, const std::string& backend,
                                 const std::string& comm_directory);

}  // namespace dnntune::cli
