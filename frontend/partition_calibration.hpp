// frontend/partition_calibration.hpp — what an answer for a SLURM partition rests on: the
// calibration of one of its nodes (from the node records scheduler/slurm_nodes.hpp keeps, which
// `calibrate --slurm`, scheduler/slurm_calibration.cpp, writes) and the partition's time limit
// as sinfo lists it.
#pragma once

#include <optional>
#include <string>

#include "common/expected.hpp"

namespace dnntune::frontend {

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
