// model/training_configuration.hpp — one way to run data-parallel training: the plain struct
// the command line fills and every prediction, search and job script is about.
#pragma once

#include <cstdint>
#include <string>

#include "common/expected.hpp"
#include "model/machine_rates.hpp"
#include "records/measurement.hpp"  // kDefaultBucketMegabytes

namespace dnntune::model {

// The defaults every answer assumes unless told (CPU and GPU, command and Python module): the
// all-reduce fusion threshold is PyTorch DDP's default bucket (the one the trainer buckets by,
// records' kDefaultBucketMegabytes), the fabric EDR InfiniBand.
inline constexpr double default_fusion_megabytes = records::kDefaultBucketMegabytes;
inline constexpr double default_fusion_bytes = default_fusion_megabytes * 1024 * 1024;
inline constexpr const char* default_fabric = "edr";

enum class CommunicationScheme { allreduce, parameter_server };

struct TrainingConfiguration {
  std::int64_t batch_per_process = 32;
  int processes_per_node = 1;
  int threads_per_process = 1;
  bool smt = false;  // place threads on SMT siblings too (hyper-threading on)
  int nodes = 1;
  CommunicationScheme scheme = CommunicationScheme::allreduce;
  int parameter_servers = 0;                   // parameter_server: ranks that serve (the rest are workers)
  bool asynchronous = false;                   // parameter_server: workers do not wait for each other
  double fusion_bytes = default_fusion_bytes;  // all-reduce fusion threshold
  std::string fabric = default_fabric;         // inter-node network (communication.hpp presets)
};

bool operator==(const TrainingConfiguration& a, const TrainingConfiguration& b);
inline bool operator!=(const TrainingConfiguration& a, const TrainingConfiguration& b) { return !(a == b); }

// Processes are spread evenly over the packages of a node, and a process's threads stay on
// one package unless it needs more cores than a package has.
struct Placement {
  int processes_per_package = 1;  // the most on any package: they share its bandwidth
  int packages_spanned = 1;       // by one process
  int cores_per_process = 1;
};

// Checks the configuration fits the node (threads x processes within the cores, or the
// hardware threads with SMT; batch >= 1; servers < ranks) and returns its placement. The
// message says what does not fit and what would.
Expected<Placement> place(const TrainingConfiguration& configuration, const MachineRates& rates);

// "2 ppn x 14 threads, SMT off, batch 32, 4 nodes" for reports.
std::string describe(const TrainingConfiguration& configuration);

}  // namespace dnntune::model
