// train/train_worker.hpp — the one builder of `dnntune train` command lines: every process that
// trains for real (a calibration's anchors, validate's runs, `train --launch`'s ranks) is started
// from a typed request through it, and the `command` a training record keeps for people to
// reproduce it is written by it too. So a flag is spelled in one place, and nothing reads a
// record's meaning back out of its command (the record's fields say it: records/measurement.hpp).
#pragma once

#include <string>
#include <vector>

#include "train/trainer.hpp"

namespace dnntune::train {

struct TrainWorkerRequest {
  std::string executable = "dnntune";  // argv[0]: the dnntune binary
  // What each rank trains: train.model is the network's source (a zoo name or a network file),
  // train.iterations the timed steps, train.warmup the untimed ones, train.bucket_megabytes the
  // fusion bucket, train.runner the trainer; train.threads 0 leaves the count to train.
  TrainOptions train;
  std::string allocator = "default";  // what every rank loads (probe/allocators.hpp)
  // > 0: `train --launch --ppn N --nodes K`, which composes the mpirun line with the binding.
  int launch_processes_per_node = 0;
  int launch_nodes = 1;
  std::string hostfile;     // with --launch
  std::string record_path;  // --record: append the records ("" = no)
  bool json = false;        // --json
  std::string output_path;  // --output ("" = standard output)
};

// The argument vector: executable, "train", then every option that is not train's default
// (--model, --batch, --iters and --warmup always; --threads when set).
std::vector<std::string> train_worker_argv(const TrainWorkerRequest& request);

// The same as one shell line, each word quoted where a shell needs it.
std::string train_worker_command(const TrainWorkerRequest& request);

}  // namespace dnntune::train
