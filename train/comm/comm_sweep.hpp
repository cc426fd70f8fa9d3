// train/comm/comm_sweep.hpp — communication calibration: MPI all-reduce (sum of floats, in
// place) and point-to-point exchange (MPI_Sendrecv between two ranks, both directions at once,
// as each step of a ring all-reduce does) timed over message sizes from 4 bytes to hundreds of
// MB, each sweep within its share of a time budget, and fitted to latency + size / bandwidth.
//
// Scopes, each only when the job has the ranks for it:
//   intra-node  the ranks of one node (shared memory); every node sweeps at once, node 0 reports
//   inter-node  one rank per node (the network)
//   job         every rank of a job that spans nodes (all-reduce only)
// Results are measurement records (kind communication, backend "mpi", descriptor "allreduce" or
// "sendrecv", message_bytes, processes and nodes of the scope), the format layer micro-runs use.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "train/comm/latency_bandwidth_fit.hpp"
#include "train/comm/mpi_session.hpp"
#include "records/measurement.hpp"

namespace dnntune::train::comm {

struct CommSweepOptions {
  std::int64_t max_message_bytes = std::int64_t{256} << 20;
  double time_budget_seconds = 60;                   // for all sweeps together; sizes that would not fit are skipped
  std::string command;                               // the command line that reproduces the records
  std::function<void(const std::string&)> progress;  // called on rank 0 as each sweep starts
};

struct CommFit {
  std::string operation;  // "allreduce", "sendrecv"
  std::string scope;      // "intra-node", "inter-node", "job"
  int processes = 0;
  int nodes = 0;
  LatencyBandwidthFit fit;              // one line over every size
  std::optional<TwoRegimeFit> regimes;  // small and large messages apart (six sizes or more)
  // What a cost model calls the link bandwidth: for all-reduce the fit's bandwidth times
  // 2(p-1)/p (a ring moves that share of the message through every link, NCCL-tests' "bus
  // bandwidth"); for an exchange, the fit's bandwidth in each direction.
  double link_bandwidth_bytes_per_s = 0;  // of the one line
};

// For all-reduce over `processes` ranks, 2(p-1)/p (the share of the message a ring moves through
// every link); 1 for an exchange.
double link_bandwidth_factor(const std::string& operation, int processes);

struct CommCalibration {
  int ranks = 0;
  int nodes = 0;
  std::string mpi_version;
  std::vector<records::Measurement> records;  // rank 0: every size of every sweep, skipped ones say why
  std::vector<CommFit> fits;                  // rank 0
  std::vector<std::string> notes;             // rank 0: sweeps that could not run or be fitted, and why
};

// Collective: every rank of the session calls it. Needs at least two ranks.
Expected<CommCalibration> calibrate_communication(const MpiSession& session, const CommSweepOptions& options);

// The message sizes a sweep times: 4 bytes, then x4, up to and including `max_message_bytes`.
std::vector<std::int64_t> sweep_message_sizes(std::int64_t max_message_bytes);

std::string comm_calibration_text(const CommCalibration& calibration);
std::string comm_calibration_json(const CommCalibration& calibration);

}  // namespace dnntune::train::comm
