// records/measurement.hpp — Measurement: one record of something dnntune timed for real — a layer
// pass (calibrate micro-runs), a whole training iteration (train), or a communication pattern
// (calibrate --comm) — in the form the model is fitted from. A light header (no hwloc, oneDNN,
// libtorch or MPI), like machine_profile.hpp.
//
// Files are JSON Lines: one self-describing record per line ("schema": "dnntune.measurement",
// "schema_version": 2), appended and flushed as each measurement is made, so an interrupted run
// loses nothing but the line being written. A record carries everything needed to reproduce it
// (benchdnn-style): the backend and its version, the machine fingerprint, the problem, the
// setting (threads, SMT, co-running processes and the CPU set each really had; for a training
// run its trainer, steps, warm-up and bucket size), the result with its spread, a status, and the
// command line. Every meaning is a typed field: the command line is for people reproducing a
// record, and no reader parses it. Version 1 files (the meaning partly in the command) are
// migrated on read (records/measurement_v1.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace dnntune::records {

constexpr const char* measurement_schema = "dnntune.measurement";
constexpr int measurement_schema_version = 2;

enum class MeasurementKind {
  layer,          // one pass of one layer (descriptor + pass)
  network,        // one whole training iteration, or a part of it (pass = "forward", "backward", ...)
  communication,  // an MPI collective or point-to-point exchange of message_bytes
  // One layer's pass timed inside a real training step (`dnntune train --module-times`): pass
  // "forward" or "backward" (backward-data and backward-weights together, as autograd runs them),
  // `module` names the layer in the network. A kind of its own, so that the readers of micro-runs
  // (kind layer) never take an in-network time for an isolated one.
  module,
  // A user's own training job, recorded by the Python hook (python/dnntune/observe.py): every rank's
  // steps after a warm-up, pass "iteration", trainer "python"; `job` holds what only a job has.
  // A kind of its own, kept in a file of its own (job_records.hpp): no fit takes it for an anchor.
  job,
};

// benchdnn's result statuses: ok (timed), skipped (not attempted, e.g. over the budget),
// unimplemented (the backend has no kernel for it), failed (it ran and broke: reason says how).
enum class MeasurementStatus { ok, skipped, unimplemented, failed };

// What a job record (kind job) holds besides the setting and the job's step times.
struct JobRun {
  std::string id;                           // the scheduler's job id (SLURM_JOB_ID), DNNTUNE_JOB_ID, or the hook's own
  std::string launcher;                     // how its ranks were started: "slurm", "torchrun", "mpirun", "none"
  std::string device = "cpu";               // "cpu" or "cuda"
  std::vector<double> rank_median_seconds;  // each rank's median step, by rank: processes x nodes of them
  // What dnntune predicted for this setup before the job (the launch line's
  // DNNTUNE_PREDICTED_IMAGES_PER_SECOND for the same network and batch); 0: none was made.
  double predicted_images_per_second = 0;
  // The inter-node fabric the job ran over, as the launch line named it (DNNTUNE_FABRIC: a preset
  // such as "edr", or numbers "25gbps-10us"); "" : not said. A multi-node job's communication
  // terms are fitted to the fabric it names (model/job_fabric_fit.hpp). Written only when set.
  std::string fabric;
};

struct Measurement {
  MeasurementKind kind = MeasurementKind::layer;
  std::string backend;          // "onednn", "torch", "torch-cuda", "mpi"
  std::string backend_version;  // e.g. "oneDNN 2.6.3", "libtorch 1.13.1", "Open MPI 4.1.4"
  std::string machine_fingerprint;

  // The problem.
  std::string network;     // network records; also the network a layer was taken from ("" if none)
  std::string descriptor;  // layer: the canonical descriptor; communication: the operation ("allreduce", "sendrecv")
  std::string pass;        // layer: "forward", "backward_data", "backward_weights"; network: "iteration", ...
  std::string module;      // kind module: the layer's name in the network ("layer1.0.conv1"); written only then
  std::int64_t batch = 0;  // per process
  std::int64_t message_bytes = 0;  // communication

  // The setting.
  int threads = 1;    // per process
  bool smt = false;   // threads placed on SMT siblings too
  int processes = 1;  // co-running processes (layer), ranks (network, communication)
  int nodes = 1;
  std::vector<std::vector<int>> cpu_sets;  // the OS CPUs each process really had, by rank
  // The memory allocator every process ran under (probe/allocators.hpp): "default" (glibc's
  // defaults), "glibc-tuned" (kReferenceAllocator), "jemalloc", "tcmalloc". Written only when not the default.
  std::string allocator = "default";
  // The arithmetic and the layout the kernels ran in. torch-cuda's fp32 convolutions run on TF32
  // tensor cores (PyTorch's default lets cuDNN), so its records say "tf32" (default_precision).
  std::string precision = "fp32";            // "fp32" (strict), "tf32", "bf16", "fp16"; written only when not "fp32"
  std::string memory_format = "contiguous";  // "contiguous" or "channels_last"; written only when not "contiguous"

  // A whole network's record (kind network, module): the zoo name or network file it was built
  // from, as `--model` took it ("" for layer and communication records). Written only when set.
  std::string network_source;
  // A training run's records (`dnntune train`: kind network passes and kind module): who trained
  // (kCppTrainer or kPythonTrainer; "" for records no trainer made, which have none of these),
  // its untimed warm-up steps, the timed steps asked for (repetitions says how many ran: a time
  // limit may end them sooner) and the gradient fusion / DDP bucket size in MiB. Written only
  // when `trainer` is set.
  std::string trainer;
  int warmup_steps = 0;
  int steps = 0;
  double bucket_megabytes = 0;

  // The result (seconds, per repetition; for a layer: one pass over the whole batch).
  MeasurementStatus status = MeasurementStatus::ok;
  std::string reason;  // why it failed / was skipped
  double median_seconds = 0;
  double coefficient_of_variation = 0;
  double min_seconds = 0;
  double max_seconds = 0;
  int repetitions = 0;

  JobRun job;  // kind job only (written only then); its median_seconds is the slowest rank's step, step by step

  std::string command;    // a dnntune command line that reproduces this record
  std::string timestamp;  // UTC, ISO 8601
};

// A job record's launchers and devices.
inline constexpr const char* kJobLaunchers[] = {"slurm", "torchrun", "mpirun", "none"};
inline constexpr const char* kJobDevices[] = {"cpu", "cuda"};
// The longest job id a record holds (SLURM's are numbers; the hook's own "HOST-PID-TIME").
constexpr std::size_t max_job_id_bytes = 256;

// What a kind module record's `module` may be: 1 to max_module_name_bytes bytes, no control
// characters (a layer name of a network file; spaces and UTF-8 are fine).
constexpr std::size_t max_module_name_bytes = 4096;
bool is_module_name(const std::string& name);

// The words `dnntune train --runner` takes and a training record's `trainer` holds: the C++
// trainer (the zoo's network as a libtorch module; also every record from before the runner
// existed) and PyTorch from Python (torchvision's network, as users train).
inline constexpr const char* kCppTrainer = "dnntune";
inline constexpr const char* kPythonTrainer = "python";

// The allocator variant every first run anchors besides glibc's defaults, installed or not (glibc
// keeping its freed memory needs no package): the allocation fit's reference (model/allocation.hpp).
inline constexpr const char* kReferenceAllocator = "glibc-tuned";

// Who trained a record: its `trainer` ("" when no trainer made it).
std::string training_runner(const Measurement& measurement);
bool trained_by_cpp_trainer(const Measurement& measurement);

// The precisions and memory formats a record, a trainer's --precision / --memory-format and a GPU
// prediction name: the one list of each, in model::GpuPrecision's order (fp32 strict, tf32, bf16,
// fp16). `names_text` writes a list as "fp32, tf32, bf16 or fp16" for messages.
const std::vector<std::string>& precision_names();
const std::vector<std::string>& memory_format_names();
bool is_precision_name(const std::string& word);
bool is_memory_format_name(const std::string& word);
std::string names_text(const std::vector<std::string>& names);

// The precision a backend's kernels run in when nothing else is asked: "tf32" for torch-cuda
// (PyTorch lets cuDNN run fp32 convolutions on TF32 tensor cores by default), else "fp32".
std::string default_precision(const std::string& backend);

// The bucket size `dnntune train --bucket-mb` takes by default (PyTorch DDP's), in MiB.
inline constexpr double kDefaultBucketMegabytes = 25;

std::string to_string(MeasurementKind kind);
std::string to_string(MeasurementStatus status);

// What identifies a measurement's problem and setting (not its result): two records with the
// same key measured the same thing. `--resume` skips work whose key is already recorded.
std::string measurement_key(const Measurement& measurement);

// One JSON line (no trailing newline) and back; `origin` names the source in errors.
std::string to_json_line(const Measurement& measurement);
Expected<Measurement> measurement_from_json_line(const std::string& line, const std::string& origin);

// Appends one record and flushes it to the file before returning (on a line of its own, also
// after a last line without its newline).
Expected<void> append_measurement(const std::string& path, const Measurement& measurement);

// Reads every record of a JSON Lines file. A last line cut short (a run killed mid-write: no
// newline, and it begins as a record does, with "{") is dropped and counted in `truncated_lines`;
// any other bad line is skipped and listed in `skipped_lines` as "FILE:LINE: why", for the caller
// to report: one bad line never costs the records around it. A file with bad lines and not one
// good record is an error (the first line's).
struct MeasurementFile {
  std::vector<Measurement> records;
  int truncated_lines = 0;
  std::vector<std::string> skipped_lines;
};
Expected<MeasurementFile> read_measurements(const std::string& path);

// Whether records may be appended to `path`, checked before any work: absent (a new file), or a
// regular file, not a link, whose whole content reads as measurement records (read_measurements).
// A file of something else (notes, a calibration) is bad input, and nothing is written to it.
Expected<void> check_record_file(const std::string& path);

// Drops a last line cut short by a kill, so that records appended after it stay whole lines.
// For the moment a resumed run starts, while nothing else appends (a missing file is fine). The
// file is checked whole first (check_record_file): refused, it is left byte for byte as it was.
Expected<void> drop_unterminated_last_line(const std::string& path);

// "2026-11-29T22:54:28Z"
std::string utc_timestamp_now();

}  // namespace dnntune::records
