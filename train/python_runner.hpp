// train/python_runner.hpp — `dnntune train --runner python`: the training step users run, a
// torchvision network trained by PyTorch from Python (train/python/torchvision_training.py,
// embedded in the binary), instead of the C++ trainer's libtorch module. Each rank of the job
// (one process, or every rank of an MPI job: the binding is the launch's, as for the C++ trainer)
// runs the script as its child, bound like itself; several ranks form a gloo process group and
// train under DistributedDataParallel. The trainer (trainer.cpp) turns their samples into the same
// report and records, so a calibration's anchor can pool runs of both trainers.
//
// Why both matter: the two trainers' images/s differ by network (module structure, in-place ops
// and glibc's heap differ; docs/results.md); the layers are not timed in Python
// (--module-times needs the C++ trainer, whose layers are the zoo's).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "train/trainer.hpp"
#include "workloads/graph.hpp"

namespace dnntune::train {

// The Python the runner starts: $DNNTUNE_PYTHON, else /usr/bin/python3 (where Debian's
// python3-torch and python3-torchvision install; a virtual environment's python3 earlier in PATH
// often lacks them).
std::string python_executable();

// Checks, by running the script with --check, that the Python imports torch and torchvision and
// that torchvision builds `network_name`; bad_input saying which and how to fix it when not.
Expected<void> check_python_runner(const std::string& network_name);

// Where the ranks of a job meet (torch.distributed's MASTER_ADDR and MASTER_PORT): a free port
// of this host, for rank 0 to broadcast ("127.0.0.1" on one node, else this host's name).
Expected<std::string> python_rendezvous_address(bool one_node);

struct PythonRank {
  int rank = 0, ranks = 1, local_rank = 0;
  int threads = 1;
  std::string rendezvous;  // "HOST:PORT"; unused for one rank
};

// The one builder of the script's arguments for training one rank of `network` with `threads`
// threads as `options` say (before the --output the runner adds).
std::vector<std::string> python_training_arguments(const TrainOptions& options, const workloads::Network& network,
                                                   int threads);

// Trains this rank in Python as `options` say and returns what it measured, in the C++ trainer's
// rank JSON ("samples", "losses", "cpus", "torch_threads", "skipped_steps", and "parameters", "versions",
// and the "device", "precision" (resolved) and "memory_format" it trained in).
// bad_input when the script refuses the request (its one-line reason); failure when it fails.
Expected<nlohmann::json> train_python_rank(const TrainOptions& options, const workloads::Network& network,
                                           const PythonRank& rank);

}  // namespace dnntune::train
