// scheduler/slurm_nodes.hpp — what dnntune keeps and asks of SLURM about a partition's nodes: the
// records of the nodes `calibrate --slurm` calibrated (CACHE/slurm/nodes/NODE.json,
// "dnntune.slurm-node" v1: node, partition, fingerprint, the calibration's path, the job), the
// nodes sinfo lists in a partition, and running the SLURM client commands.
// scheduler/slurm_calibration.cpp writes the records; frontend/partition_calibration.cpp answers from them.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"

namespace dnntune::scheduler {

// CACHE/slurm: node records, job scripts and logs, fabric sweeps.
std::string slurm_directory();

struct NodeRecord {
  std::string node, partition, fingerprint, calibration, measurements, job;
  double written = 0;  // seconds since the epoch
};
Expected<NodeRecord> read_node_record(const std::string& path);
Expected<void> write_node_record(const NodeRecord& record);
// The records of `partition`, newest first; an unreadable record is an error.
Expected<std::vector<NodeRecord>> node_records_of(const std::string& partition);

// Runs `words` (quoted, never through a shell's parsing of user text) and returns its standard
// output; a command that is missing or fails is a failure naming it.
Expected<std::string> run_command(const std::vector<std::string>& words);
// The non-empty lines of `text`.
std::vector<std::string> lines_of(const std::string& text);

// The nodes sinfo lists in `partition`, one name each, sorted.
Expected<std::vector<std::string>> partition_nodes(const std::string& partition);

}  // namespace dnntune::scheduler
