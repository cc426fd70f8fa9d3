// frontend/partition_calibration.hpp — what dnntune knows of a SLURM partition: the nodes
// `calibrate --slurm` calibrated (CACHE/slurm/nodes/NODE.json, "dnntune.slurm-node" v1: node,
// partition, fingerprint, the calibration's path, the job), the partition's nodes and time limit
// as sinfo lists them, and the calibration an answer for the partition comes from.
// cli/slurm_calibration.cpp submits the jobs that write the records.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace dnntune::frontend {

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

// The longest job `partition` takes (sinfo's TimeLimit, the partition's MaxTime), in seconds;
// the cluster's default partition when `partition` is empty; infinity when it has none. nullopt
// when SLURM cannot say (no sinfo, no controller, no such partition).
std::optional<double> partition_time_limit_seconds(const std::string& partition);

// What a partition's calibration is: the file and one line on where it was measured.
struct PartitionCalibration {
  std::string calibration_path;
  std::string basis;  // "measured on node042 of partition P by SLURM job 1234 (fingerprint ...)"
};
// The newest calibration recorded for `partition` of a node sinfo still lists in it (every
// record of it when sinfo is not there); nullopt when none is; an unreadable record is an error.
Expected<std::optional<PartitionCalibration>> find_partition_calibration(const std::string& partition,
                                                                         const std::string& backend);

}  // namespace dnntune::frontend
