// frontend/partition_calibration.cpp — see partition_calibration.hpp.
#include "frontend/partition_calibration.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

#include "common/text_format.hpp"
#include "model/calibration.hpp"
#include "scheduler/slurm_nodes.hpp"
#include "tuner/sbatch_header.hpp"

namespace dnntune::frontend {
namespace {

using scheduler::lines_of;
using scheduler::node_records_of;
using scheduler::NodeRecord;
using scheduler::partition_nodes;
using scheduler::run_command;

// sinfo waits for an unreachable controller: the answer is "SLURM cannot say" after this long.
constexpr const char* sinfo_timeout_seconds = "5";

}  // namespace

std::optional<double> partition_time_limit_seconds(const std::string& partition) {
  // "%P %l": the partition (the default one marked with '*') and its time limit.
  std::vector<std::string> words = {"timeout", sinfo_timeout_seconds, "sinfo", "-h", "-o", "%P %l"};
  if (!partition.empty()) words.insert(words.end(), {"-p", partition});
  auto output = run_command(words);
  if (!output) return std::nullopt;
  for (const auto& line : lines_of(*output)) {
    std::istringstream in(line);
    std::string name, limit;
    if (!(in >> name >> limit)) continue;
    const bool is_default = !name.empty() && name.back() == '*';
    if (is_default) name.pop_back();
    if (partition.empty() ? !is_default : name != partition) continue;
    if (limit == "infinite" || limit == "UNLIMITED") return std::numeric_limits<double>::infinity();
    return tuner::slurm_time_seconds(limit);
  }
  return std::nullopt;
}

Expected<std::optional<PartitionCalibration>> find_partition_calibration(const std::string& partition,
                                                                         const std::string& backend) {
  auto records = node_records_of(partition);
  if (!records) return records.error();
  // Only nodes that are still in the partition, when sinfo can say which.
  if (auto nodes = partition_nodes(partition); nodes && !nodes->empty())
    records->erase(
        std::remove_if(records->begin(), records->end(),
                       [&](const auto& r) { return !std::binary_search(nodes->begin(), nodes->end(), r.node); }),
        records->end());
  for (const NodeRecord& record : *records) {
    auto calibration = model::read_calibration(record.calibration);
    if (!calibration) return calibration.error();
    if (calibration->backend != backend) continue;
    // Node names, jobs and fingerprints are read from files: escaped (common/text_format.hpp) as printed.
    std::string basis = "measured on node " + printable(record.node) + " of partition " + partition + " by SLURM job " +
                        printable(record.job) + " (fingerprint " + printable(record.fingerprint) + ")";
    const auto other = std::find_if(records->begin(), records->end(),
                                    [&](const auto& r) { return r.fingerprint != record.fingerprint; });
    if (other != records->end())
      basis += "; the partition also holds other hardware (" + printable(other->node) + ", fingerprint " +
               printable(other->fingerprint) + "): this answer is for " + printable(record.node) + "'s kind";
    return std::optional<PartitionCalibration>(PartitionCalibration{record.calibration, basis});
  }
  return std::optional<PartitionCalibration>();
}

}  // namespace dnntune::frontend
