// cli/gpu_commands.hpp — predict, scale and recommend when --machine names a GPU profile
// (a built-in GPU profile, data::builtin_gpu_machine_names(), or a GPU profile JSON): the same
// commands, answered by the GPU model (frontend/gpu_answers.hpp builds the answers; here they are
// parsed from the options and rendered).
#pragma once

#include <optional>
#include <string>

#include "cli/command_support.hpp"
#include "cli/launch_options.hpp"
#include "cli/model_options.hpp"
#include "frontend/gpu_answers.hpp"
#include "model/gpu_predictor.hpp"
#include "records/measurement.hpp"
#include "workloads/graph.hpp"

namespace dnntune::cli {

// The efficiencies GPU predictions use: the built-in GPU reference calibration
// (data/reference_calibrations/torch-cuda.json) once one is measured, else the documented priors
// (GpuEfficiencies::source says which).
model::GpuEfficiencies gpu_efficiencies();

using frontend::GpuSource;
// The GPU node --machine names with its efficiencies (--calibration FILE: a GPU calibration made
// by `dnntune fit --backend torch-cuda`), or nothing for a CPU machine, none, or one that does not
// load (the CPU path reports that). Fails the command on a GPU calibration that does not load,
// and on --topology with a GPU.
std::optional<GpuSource> gpu_machine(const ModelSourceOptions& source);

// `dnntune fit --backend torch-cuda --machine GPU`: the GPU model's efficiencies fitted to
// torch-cuda layer records; writes the calibration to `output_path` when given.
void run_gpu_fit(const std::vector<records::Measurement>& records, const std::string& machine,
                 const std::string& output_path, bool json);

// --gpus/--batch/--nodes/--fusion-mb/fabric as a GPU configuration; the CPU-only options
// (--threads, --smt, --ps, --async, --ppn) are refused with a one-line reason. --precision and
// --memory-format are the request's names (frontend::GpuSetupRequest), read by frontend.
model::GpuConfiguration gpu_configuration_from(const ConfigurationOptions& options);

// --precision / --memory-format of a GPU command: "" leaves the default; bad input otherwise.
void apply_gpu_numerics(model::GpuConfiguration& configuration, const std::string& precision,
                        const std::string& memory_format);

// `network` as given (--model).
void run_gpu_predict(const std::string& network, const GpuSource& gpu, const ConfigurationOptions& configuration,
                     const OutputOptions& output);
void run_gpu_scale(const std::string& network, const GpuSource& gpu, const ConfigurationOptions& configuration,
                   const std::string& nodes, const OutputOptions& output);

struct GpuRecommendRequest {
  std::string gpus;            // --gpus LIST ("" : 1, 2, 4 ... the node's)
  std::string precisions;      // --precision LIST ("": every precision the GPU has)
  std::string memory_formats;  // --memory-format LIST ("": contiguous and channels_last)
  std::string batches;         // --batch LIST ("" : 32, 64, 128)
  std::string fusion_megabytes;
  std::string nodes;
  std::string fabric;
  std::string objective;  // throughput | images-per-node
  std::string format;  // text | json | slurm | torchrun (mpirun: refused, one process per GPU wants srun or torchrun)
  bool explain = false;
  std::string output_path;
  // The job script's and launch line's: --time (default: --epochs of --dataset-images at the
  // pick's images/s, as on CPU nodes), --partition, --account; the training command after `--`.
  LaunchOptions launch;
  double epochs = tuner::default_epochs;
  std::int64_t dataset_images = tuner::default_dataset_images;
  std::vector<std::string> train_command;
};
void run_gpu_recommend(const std::string& network, const GpuSource& gpu, const GpuRecommendRequest& request);

}  // namespace dnntune::cli
