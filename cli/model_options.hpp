// cli/model_options.hpp — the options every model command shares (predict, scale, recommend,
// validate): which network, which configuration, and where the model comes from (this
// machine's calibration, or a spec machine with a calibration's efficiencies carried over).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "cli/default_calibration.hpp"
#include "common/expected.hpp"
#include "model/predictor.hpp"
#include "model/training_configuration.hpp"

namespace dnntune::cli {

struct ModelSourceOptions {
  std::string calibration_path;  // --calibration FILE
  std::string machine;           // --machine NAME|FILE.json
  std::string topology_path;     // --topology FILE.xml (recommend: tune for another node's layout)
  std::string backend = "torch"; // --backend: the framework the user trains with
};
void add_model_source_options(CLI::App& command, ModelSourceOptions& options);

// --calibration FILE: that machine. --machine NAME with --calibration FILE: the spec machine
// with FILE's efficiencies (FILE is the reference). --topology FILE.xml with --calibration FILE:
// that node's topology with the calibrated machine's peaks and efficiencies (a login node
// tuning for compute nodes of the same CPU). No --calibration: this machine's cached default
// calibration for `when_uncalibrated` (made on first use; default_calibration.hpp).
Expected<model::Predictor> load_predictor(const ModelSourceOptions& options,
                                          const DefaultCalibrationRequest& when_uncalibrated);

// --ppn --threads --smt --batch --nodes --network --ps --async --fusion-mb
struct ConfigurationOptions {
  model::TrainingConfiguration configuration;
  int parameter_servers = 0;
  double fusion_megabytes = 25;
};
void add_configuration_options(CLI::App& command, ConfigurationOptions& options, bool with_nodes);
// --network NAME: an inter-node fabric preset (model/communication.hpp), checked when parsed.
void add_fabric_option(CLI::App& command, std::string& fabric);

Expected<model::TrainingConfiguration> configuration_from(const ConfigurationOptions& options);

}  // namespace dnntune::cli
