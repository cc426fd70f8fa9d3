// cli/model_options.hpp — the options every model command shares (predict, scale, recommend,
// validate): which network, which configuration, and where the model comes from (this
// machine's calibration, or a spec machine with a calibration's efficiencies carried over).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "pipeline/default_calibration.hpp"
#include "common/expected.hpp"
#include "model/predictor.hpp"
#include "model/training_configuration.hpp"

namespace dnntune::cli {

struct ModelSourceOptions {
  std::string calibration_path;  // --calibration FILE
  std::string machine;           // --machine NAME|FILE.json
  std::string topology_path;     // --topology FILE.xml (recommend: tune for another node's layout)
  std::string backend = "torch"; // --backend: the framework the user trains with
  double calibration_budget_seconds = 0;  // --calibration-budget: 0 is the default's 60 s, extended up to 150 s
  std::string partition;         // recommend --partition: answer from that SLURM partition's calibration
};
void add_model_source_options(CLI::App& command, ModelSourceOptions& options);

// --calibration FILE: that machine. --machine NAME with --calibration FILE: the spec machine
// with FILE's efficiencies (FILE is the reference). --topology FILE.xml with --calibration FILE:
// that node's topology with the calibrated machine's peaks and efficiencies (a login node
// tuning for compute nodes of the same CPU). No --calibration: this machine's cached default
// calibration for `when_uncalibrated` (made on first use; default_calibration.hpp).
Expected<model::Predictor> load_predictor(const ModelSourceOptions& options,
                                          const pipeline::DefaultCalibrationRequest& when_uncalibrated);

// The model and what it rests on, for the answers that say so (recommend). A spec machine's
// model carries a reference calibration's efficiencies with spec priors for what that reference
// could not identify (model/spec_priors.hpp); the reference is the closest of the built-in ones
// and the user's ($DNNTUNE_REFERENCE_DIR, else CACHE/references: `dnntune fit -o` files).
// With `partition` and no other source: the calibration `calibrate --slurm` made of a node of
// it, when there is one (else this machine's, and the basis says so).
struct LoadedModel {
  model::Predictor predictor;
  std::vector<std::string> basis;  // one line each
  // A spec answer: the same model with the priors at their values, not drawn, so that the band
  // of the identified parameters alone can be told from the whole band.
  std::optional<model::Predictor> without_prior_spread;
  bool measured_here = false;      // this machine's own calibration: --verify can settle a tie
  bool from_partition = false;     // the calibration `calibrate --slurm` made of another node
};
Expected<LoadedModel> load_model(const ModelSourceOptions& options, const pipeline::DefaultCalibrationRequest& when_uncalibrated);

// Where users' reference calibrations are read from.
std::string reference_directory();

// The inter-node fabric: --fabric NAME (a preset; --network is its older name), or --link-gbps X --link-latency-us Y (numbers,
// e.g. those of an emulated cluster's shaped links; they replace a calibration's measured link).
struct FabricOptions {
  std::string preset = "edr";  // --fabric NAME
  std::string link_gbits;       // as typed: parsed and checked by fabric_from
  std::string link_latency_us;
};
void add_fabric_options(CLI::App& command, FabricOptions& options);
Expected<std::string> fabric_from(const FabricOptions& options);

// --ppn --threads --smt --batch --nodes --ps --async --fusion-mb and the fabric options
struct ConfigurationOptions {
  FabricOptions fabric;
  model::TrainingConfiguration configuration;
  int parameter_servers = 0;
  double fusion_megabytes = 25;
  int gpus_per_node = 0;  // --gpus: GPU machines only (0: one GPU)
  std::string precision;      // --precision: GPU machines only ("": the GPU's PyTorch default)
  std::string memory_format;  // --memory-format: GPU machines only ("": contiguous)
};
void add_configuration_options(CLI::App& command, ConfigurationOptions& options, bool with_nodes);

Expected<model::TrainingConfiguration> configuration_from(const ConfigurationOptions& options);

}  // namespace dnntune::cli
