// train/trainer.hpp — real data-parallel training of a workload, the ground truth the model
// is checked against: SGD with momentum on synthetic ImageNet-shaped data (one fixed random batch
// per rank, as the Horovod and tf_cnn_benchmarks synthetic benchmarks do) with a real
// cross-entropy loss, timed per iteration and per phase.
//
// One process (no MPI), or one rank of an MPI job (mpirun, srun): all-reduce of bucketed
// gradients overlapped with the backward pass, or parameter servers, synchronous or not. Every
// rank reports its effective CPU set and thread counts; a rank given more threads than CPUs it
// may run on is refused (the default one-core-per-rank binding of Open MPI is the usual cause).
// A light header: the report types are plain data (training_report.hpp prints them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "probe/timing.hpp"
#include "records/measurement.hpp"
#include "workloads/graph.hpp"

namespace dnntune::train {

struct TrainOptions {
  std::string model;        // a built-in network or a network JSON file (workloads::load_network)
  std::int64_t batch = 32;  // images per process and step
  int iterations = 10;      // measured steps
  int warmup = 2;           // steps before them, not measured
  int threads = 0;          // per process; 0: one per core this process may use
  float learning_rate = 0.01f;
  float momentum = 0.9f;
  double bucket_megabytes = records::kDefaultBucketMegabytes;  // gradient fusion threshold (PyTorch DDP's default)
  int parameter_servers = 0;    // 0: all-reduce; S: the last S ranks are parameter servers
  bool asynchronous = false;    // parameter servers without a barrier
  std::string device = "auto";  // "cpu", "cuda", or "auto" (CUDA when libtorch has a GPU)
  // The step's arithmetic (train/precision.hpp): "auto" (tf32 on a GPU of compute capability 8.0
  // or later, PyTorch's default; else fp32), "fp32" (strict), "tf32", "bf16" or "fp16" (autocast;
  // fp16 with dynamic loss scaling). Not fp32 on the CPU: refused.
  std::string precision = "auto";
  std::string memory_format = "contiguous";  // or "channels_last": the weights and the batch in NHWC
  std::uint64_t seed = 1;                    // weights (rank 0's, broadcast) and each rank's synthetic batch
  // Time each layer inside the step (train/module_timer.hpp): a clock read around every op and a
  // gradient hook per layer, in the last warm-up step only, so the timed steps run without them
  // (they can slow the step they time: docs/results.md); the layers' times are then scaled by
  // the timed steps' median pass over that step's pass. Needs warmup >= 1. CPU only.
  bool module_times = false;
  // Seconds from the first step on after which no further timed step is started when it would
  // end past them (judged by the last step's length; rank 0 decides for every rank); at least
  // one timed step always runs, after every warm-up step (the first step of a one-thread cliff
  // setting runs markedly slower than the next). 0: none, all `iterations` run. For a caller with
  // a budget (a calibration's anchors): a setting far slower than predicted (a one-thread
  // dispatch cliff) then costs its warm-up and one step instead of all of them. Not with
  // parameter servers (they serve a fixed number of steps).
  double time_limit_seconds = 0;
  // Who trains: records::kCppTrainer, the C++ trainer (the zoo's network as a libtorch module), or
  // records::kPythonTrainer, torchvision's network trained by PyTorch from Python, as users train
  // (train/python_runner.hpp; the CPU, all-reduce or one process, no --module-times).
  std::string runner = records::kCppTrainer;
};

// The report's (and the records' descriptor) name of how a job of `ranks` ranks, `servers` of
// them parameter servers, trains: "single", "allreduce", "ps-sync" or "ps-async".
inline std::string strategy_name(int ranks, int servers, bool asynchronous) {
  if (servers > 0) return asynchronous ? "ps-async" : "ps-sync";
  return ranks > 1 ? "allreduce" : "single";
}

// Checks what can be checked before any process starts (the same on every rank).
Expected<void> check_train_options(const TrainOptions& options);

// check_train_options and the network it names (built-in or a file): what one process refuses
// before it starts ranks or loads libtorch (about a second). The network, for what needs it next.
Expected<workloads::Network> check_train_request(const TrainOptions& options);

// One rank as it really ran.
struct RankReport {
  int rank = 0;
  int node = 0;
  std::string role;       // "worker" or "server"
  std::vector<int> cpus;  // the OS CPUs it may run on
  int allowed_cores = 0;
  int openmp_threads = 0;        // omp_get_max_threads() after the trainer set its threads
  int torch_threads = 0;         // at::get_num_threads()
  std::string weights_checksum;  // FNV-1a of its final parameters' bytes (equal = identical weights)
  std::vector<std::string> warnings;
};

// One layer of the network as it ran inside the measured steps (--module-times), pooled over
// workers: the median over steps of its forward and of its backward (backward-data and
// backward-weights together; repetitions 0 when it ran no backward).
struct ModuleTime {
  std::string name;        // the layer's name in the network ("layer1.0.conv1")
  std::string descriptor;  // its canonical descriptor, as the micro-runs record it
  probe::TimingSummary forward, backward;
};

struct TrainingReport {
  std::string network;
  std::int64_t parameters = 0;
  std::int64_t batch = 0;  // per process
  int processes = 1;       // ranks in the job
  int workers = 1;         // ranks that train
  int servers = 0;
  int nodes = 1;
  int threads = 1;                           // per process
  bool smt = false;                          // some rank runs more threads than it has cores (on SMT siblings)
  std::string strategy;                      // "single", "allreduce", "ps-sync", "ps-async"
  std::string device;                        // "cpu" or "cuda"
  std::string backend;                       // "torch" or "torch-cuda"
  std::string backend_version;               // "libtorch 1.13.0"
  std::string precision = "fp32";            // as run ("auto" resolved): fp32, tf32, bf16, fp16
  std::string memory_format = "contiguous";  // or channels_last
  int skipped_steps = 0;    // fp16: timed steps the loss scaler skipped (inf or NaN gradients), rank 0's
  std::string mpi_version;  // "" without MPI
  std::string machine_fingerprint;
  int buckets = 0;  // all-reduce by the C++ trainer only (0 under --runner python: DDP's own)
  std::int64_t largest_bucket_bytes = 0;
  int iterations = 0, warmup = 0;  // timed steps as run (fewer than asked when a time limit ended them)
  int requested_iterations = 0;    // --iters

  double images_per_second = 0;    // the whole job, at the median iteration time
  probe::TimingSummary iteration;  // the job's step: per step, the slowest worker
  // Pooled over workers: forward, backward, what was left of communication after backward,
  // the optimizer update (copying the pulled weights, for parameter servers).
  probe::TimingSummary forward, backward, exposed_communication, optimizer;
  probe::TimingSummary communication;  // all-reduce time per step, overlapped and exposed together
  // Minor page faults per step and worker (the median, pooled over workers): the fresh pages the
  // allocator handed out during the forward and the backward. Near 0 under an allocator that
  // keeps freed memory (glibc-tuned); what a layer's micro-run in isolation does not see.
  double forward_page_faults = 0, backward_page_faults = 0;
  std::vector<double> losses;                  // rank 0's loss at every step, warm-up included
  std::vector<std::int64_t> staleness_counts;  // parameter servers: [k] = updates k versions late
  std::vector<RankReport> ranks;
  // --module-times: every layer but the input, in the network's order, and per step the sums
  // over layers of forward and backward (the rest of each pass is untimed glue).
  std::vector<ModuleTime> modules;
  probe::TimingSummary modules_forward, modules_backward;
};

// Trains as `options` say, on this process (and its MPI job when a launcher started it). Every
// rank returns; only rank 0's report is filled in (is_rank0 says which one this is). A problem that
// the ranks agree on before training (bad options, a rank that cannot run) is returned by rank 0
// only; the other ranks return an empty outcome, so that their exit does not end the job first.
struct TrainingOutcome {
  bool is_rank0 = true;
  TrainingReport report;
};
Expected<TrainingOutcome> train(const TrainOptions& options);

// What train() runs: the trainer itself, built into the libtorch module (torch_module/), which
// train() loads on its first call so that commands that never train do not load libtorch.
Expected<TrainingOutcome> train_with_libtorch(const TrainOptions& options);

}  // namespace dnntune::train
