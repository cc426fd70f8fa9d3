// cli/predict_command.cpp — `dnntune predict`: one configuration's iteration time split by
// term, images/s with its band, scaling efficiency.
#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_commands.hpp"
#include "cli/model_options.hpp"
#include "cli/option_table.hpp"
#include "common/json_file.hpp"
#include "frontend/request_defaults.hpp"
#include "model/report.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::cli {
namespace {

struct PredictOptions {
  std::string model;
  ConfigurationOptions configuration;
  ModelSourceOptions source;
  OutputOptions output;
  frontend::GivenLayout given_layout;  // without --ppn/--threads: the recommended layout
};

void run_predict(const PredictOptions& options) {
  const auto network = value_or_fail(workloads::load_network(options.model));
  if (const auto gpu = gpu_machine(options.source))
    return run_gpu_predict(network, *gpu, options.configuration, options.output);
  const auto asked = value_or_fail(configuration_from(options.configuration));
  const auto predictor =
      value_or_fail(load_predictor(options.source, {{options.model}, {asked.batch_per_process}, options.source.backend}));
  const auto defaulted = value_or_fail(frontend::with_default_layout(predictor, network, asked, options.given_layout));
  const auto prediction = value_or_fail(predictor.predict(network, defaulted.configuration));
  const std::string note = defaulted.layout_basis.empty() ? "" : "note: " + defaulted.layout_basis + "\n";
  if (!options.output.json) return write_output(model::prediction_text(prediction) + note, options.output.path);
  auto document = schema_head("dnntune.prediction", 1);
  document.update(model::prediction_json(prediction));
  if (!defaulted.layout_basis.empty()) document["layout_basis"] = defaulted.layout_basis;
  write_output(document.dump(2) + "\n", options.output.path);
}

}  // namespace

void add_predict_command(CLI::App& root) {
  static PredictOptions options;
  CLI::App* command = root.add_subcommand(
      "predict", "Predict one training configuration: iteration time split by term, images/s with a 90% band, "
                 "scaling efficiency over nodes.");
  add_value(*command, option_rows::model, options.model)->required();
  add_configuration_options(*command, options.configuration, true);
  add_model_source_options(*command, options.source);
  add_output_options(*command, options.output);
  command->callback([command] {
    options.given_layout = {command->count("--ppn") > 0, command->count("--threads") > 0, options.configuration.configuration.smt};
    run_predict(options);
  });
}

}  // namespace dnntune::cli
