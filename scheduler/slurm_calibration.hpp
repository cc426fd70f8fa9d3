// scheduler/slurm_calibration.hpp — calibrating the compute nodes of a SLURM partition from a login
// node (`dnntune calibrate --slurm`); frontend/partition_calibration.hpp answers from what it records.
//
// `calibrate --slurm --partition P` submits one exclusive single-node job that runs this
// dnntune on a compute node of P: the probe, the layer micro-runs and the fit of the default
// calibration (pipeline/default_calibration.hpp), into the cache directory, which must be on a file
// system the compute nodes share (it is keyed by the node's fingerprint, as on any machine).
// When P has two nodes or more, a second job, after the first, sweeps all-reduce over two nodes
// (mpirun -np 2, one rank per node) and refits with the measured fabric. The job then records
// the node (scheduler/slurm_nodes.hpp). It waits with progress (squeue, the job's log), or
// returns once submitted; the caller says how to pick the result up.
//
// The library knows no option names: the dnntune command lines the jobs run come from the
// caller (JobCommandLines, built from the command's option table).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "pipeline/default_calibration.hpp"
#include "scheduler/slurm_nodes.hpp"

namespace dnntune::scheduler {

struct SlurmCalibrationRequest {
  std::string partition;
  std::string account;                  // "" : the user's default
  std::string time_limit = "01:00:00";  // per job
  std::vector<std::string> models;
  std::vector<std::int64_t> batches;
  std::string backend = "torch";
  double budget_seconds = 60;  // layer micro-runs on the node (the default calibration's)
  bool wait = true;
  double poll_seconds = 5;
  pipeline::Progress progress = nullptr;  // submissions, job states, the jobs' progress lines; may be empty
};

// The arguments after the dnntune executable of each job's command line.
struct JobCommandLines {
  // The single-node job: calibrate this node and record it (run_slurm_node_job, with `request`).
  std::function<std::vector<std::string>(const SlurmCalibrationRequest& request)> node_job;
  // The two-node job, one rank per node under mpirun: sweep all-reduce into `comm_directory`...
  std::function<std::vector<std::string>(const std::string& comm_directory)> fabric_sweep;
  // ...then refit with the fabric it measured (refit_with_fabric).
  std::function<std::vector<std::string>(const SlurmCalibrationRequest& request, const std::string& comm_directory)>
      fabric_refit;
};

struct SubmittedCalibration {
  std::size_t partition_nodes = 0;
  std::string node_job, node_log;        // the single-node calibration
  std::string fabric_job, fabric_log;    // the two-node sweep and refit; "" on a one-node partition
  std::optional<NodeRecord> calibrated;  // the node's record, when waited for
};

// The cache directory goes into the jobs' #SBATCH lines, where SLURM reads '%' as a pattern (%j:
// the job id): refused there, as are words a shell would split, and a relative path.
Expected<void> check_cache_directory_for_jobs(const std::string& cache_directory);

// Checks the request (names that go into the job scripts, the networks, the cache directory), finds
// P's nodes with sinfo, submits the job(s) and, when asked, waits for them and finds the node's
// record. `answer_command` is what answers from the result (named in a failure after the node's
// calibration, which is usable then).
Expected<SubmittedCalibration> calibrate_through_slurm(const SlurmCalibrationRequest& request,
                                                       const JobCommandLines& commands,
                                                       const std::string& answer_command);

// Inside the single-node job: calibrate this node into the cache and record it for `partition`.
Expected<NodeRecord> run_slurm_node_job(const SlurmCalibrationRequest& request);
// Inside the two-node job, after the sweep in `comm_directory`: refit the node's calibration
// with the measured fabric and point P's node record at it.
Expected<void> refit_with_fabric(const std::string& partition, const std::string& backend,
                                 const std::string& comm_directory);

}  // namespace dnntune::scheduler
