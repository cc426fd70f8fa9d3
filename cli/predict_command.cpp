// cli/predict_command.cpp — `dnntune predict`: one configuration's iteration time split by
// term, images/s with its band, scaling efficiency, and the setup's allocator.
#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_commands.hpp"
#include "cli/launch_options.hpp"
#include "cli/model_options.hpp"
#include "cli/option_table.hpp"
#include "frontend/answers.hpp"
#include "model/job_contradictions.hpp"
#include "model/report.hpp"

namespace dnntune::cli {
namespace {

struct PredictOptions {
  std::string model;
  ConfigurationOptions configuration;
  ModelSourceOptions source;
  OutputOptions output;
  std::string allocator;               // --allocator; empty: the recommended setup's
  frontend::GivenLayout given_layout;  // without --ppn/--threads: the recommended layout
};

void run_predict(const PredictOptions& options) {
  if (const auto gpu = gpu_machine(options.source)) {
    if (!options.allocator.empty()) fail(bad_input(frontend::gpu_allocator_refusal()));
    return run_gpu_predict(options.model, *gpu, options.configuration, options.output);
  }
  const frontend::PredictRequest request{options.model, value_or_fail(configuration_from(options.configuration)),
                                         options.given_layout, options.allocator};
  const auto answer = value_or_fail(frontend::answer_predict({options.source, "", print_progress}, request));
  if (options.output.json)
    return write_output(frontend::prediction_document(answer).dump(2) + "\n", options.output.path);
  write_output(model::prediction_text(answer.prediction) + setup_allocator_text(answer.allocator) +
                   (answer.layout_basis.empty() ? "" : "note: " + answer.layout_basis + "\n") +
                   model::contradictions_text(answer.contradicting_jobs),
               options.output.path);
}

}  // namespace

void add_predict_command(CLI::App& root) {
  static PredictOptions options;
  CLI::App* command =
      root.add_subcommand("predict",
                          "Predict one training configuration: iteration time split by term, images/s with a 90% band, "
                          "scaling efficiency over nodes.");
  add_value(*command, option_rows::model, options.model)->required();
  add_configuration_options(*command, options.configuration, true);
  add_allocator_option(*command, options.allocator);
  add_model_source_options(*command, options.source);
  add_output_options(*command, options.output);
  command->callback([command] {
    options.given_layout = given_layout(*command, options.configuration);
    run_predict(options);
  });
}

}  // namespace dnntune::cli
