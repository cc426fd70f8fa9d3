// cli/model_options.hpp — the options every model command shares (predict, scale, recommend,
// validate): which network, which configuration, and where the model comes from (this
// machine's calibration, or a spec machine with a calibration's efficiencies carried over; the
// policy is frontend/model_source.hpp's, shared with `import dnntune`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/progress.hpp"
#include "frontend/model_source.hpp"
#include "frontend/request_defaults.hpp"
#include "pipeline/default_calibration.hpp"
#include "common/expected.hpp"
#include "model/predictor.hpp"
#include "model/training_configuration.hpp"
#include "tuner/allocator_choice.hpp"

namespace dnntune::cli {

// Where the model comes from: --calibration, --machine, --topology, --backend,
// --calibration-budget, recommend's --partition (frontend/model_source.hpp decides what they mean).
using ModelSourceOptions = frontend::ModelSource;
using frontend::LoadedModel;
using frontend::reference_directory;
void add_model_source_options(CLI::App& command, ModelSourceOptions& options);

// frontend::load_model and load_predictor with the first run's progress on standard error
// ("dnntune: ..."), as every command shows it.
Expected<model::Predictor> load_predictor(const ModelSourceOptions& options,
                                          const pipeline::DefaultCalibrationRequest& when_uncalibrated);
Expected<LoadedModel> load_model(const ModelSourceOptions& options,
                                 const pipeline::DefaultCalibrationRequest& when_uncalibrated);

// Progress lines of the libraries on standard error: common/progress.hpp's print_progress.

// The inter-node fabric: --fabric NAME (a preset; --network is its older name), or --link-gbps X --link-latency-us Y
// (numbers,
// e.g. those of an emulated cluster's shaped links; they replace a calibration's measured link).
struct FabricOptions {
  std::string preset = model::default_fabric;  // --fabric NAME
  std::string link_gbits;                      // as typed: parsed and checked by fabric_from
  std::string link_latency_us;
};
void add_fabric_options(CLI::App& command, FabricOptions& options);
Expected<std::string> fabric_from(const FabricOptions& options);

// --ppn --threads --smt --batch --nodes --ps --async --fusion-mb and the fabric options
struct ConfigurationOptions {
  FabricOptions fabric;
  model::TrainingConfiguration configuration;
  int parameter_servers = 0;
  double fusion_megabytes = model::default_fusion_megabytes;
  int gpus_per_node = 0;      // --gpus: GPU machines only (0: one GPU)
  std::string precision;      // --precision: GPU machines only ("": the GPU's PyTorch default)
  std::string memory_format;  // --memory-format: GPU machines only ("": contiguous)
};
void add_configuration_options(CLI::App& command, ConfigurationOptions& options, bool with_nodes);

Expected<model::TrainingConfiguration> configuration_from(const ConfigurationOptions& options);

// The refusal of a GPU machine's options for a CPU node: --gpus (`gpus`) or else --precision and
// --memory-format, naming the GPU machines (predict, scale and recommend say it alike).
std::string gpu_only_options_refused(bool gpus);

// What a GPU machine's layout is given with: --gpus, --batch, --nodes and --fusion-mb.
std::string gpu_node_options();

// Which parts of the layout `command`'s user gave (--ppn, --threads, --smt); the rest is the
// recommended setup's (predict, scale).
frontend::GivenLayout given_layout(const CLI::App& command, const ConfigurationOptions& options);

// predict's and scale's allocator line: where the model knows the allocator's gain (this
// machine's calibration) or the user named one; "" for a spec machine, whose answer leaves it.
std::string setup_allocator_text(const tuner::AllocatorChoice& allocator);

}  // namespace dnntune::cli
