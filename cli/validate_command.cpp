// cli/validate_command.cpp — `dnntune validate`: every valid configuration of this machine
// trained for real and compared with the model's predictions (pipeline/validate.hpp).
#include <iostream>

#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/model_options.hpp"
#include "cli/number_rules.hpp"
#include "cli/option_table.hpp"
#include "pipeline/validate.hpp"
#include "model/validation.hpp"
#include "tuner/search_space.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::cli {
namespace {

struct ValidateOptions {
  std::vector<std::string> models = {"resnet18", "resnet50", "inception_v3"};
  std::vector<std::int64_t> batches = {8, 16};
  bool quick = false;
  bool resume = false;
  pipeline::RealTrainingOptions training;
  ModelSourceOptions source;
  OutputOptions output;
};

void run_validate(ValidateOptions options) {
  if (options.quick) {
    options.models = {"resnet18"};
    options.batches = {8};
    options.training.iterations = 3;
  }
  pipeline::ValidationRequest request;
  request.training = options.training;
  request.resume = options.resume;
  ok_or_fail(pipeline::check_validation_request(request));  // before the calibration, which may take minutes
  if (options.source.backend != "torch")
    fail(bad_input("validate trains with PyTorch (libtorch): it validates the torch backend only"));
  request.models = options.models;
  for (const auto& name : options.models) request.networks.push_back(value_or_fail(workloads::load_network(name)));
  const auto predictor = value_or_fail(load_predictor(options.source, {options.models, options.batches, "torch"}));
  tuner::SearchSpaceOptions space_options;
  space_options.batches_per_process = options.batches;
  space_options.fusion_megabytes = {model::default_fusion_megabytes};  // the trainer's bucket size
  request.configurations = tuner::enumerate_search_space(predictor.rates(), space_options).valid;
  request.progress = progress_printer("validate");
  const auto rows = value_or_fail(pipeline::validate_here(predictor, request));
  const auto summary = model::summarise_validation(rows);
  write_output(options.output.json ? model::validation_json(rows, summary).dump(2) + "\n"
                                   : model::validation_text(rows, summary),
               options.output.path);
}

}  // namespace

void add_validate_command(CLI::App& root) {
  static ValidateOptions options;
  CLI::App* command = root.add_subcommand(
      "validate",
      "Train for real in every valid configuration of this machine (through mpirun, with the binding a job would "
      "get) and compare with the model's predictions: measured vs predicted images/s, error, mean absolute "
      "percentage error per network, and whether the predicted ranking is the measured one. Takes minutes.");
  add_list(*command, option_rows::model, options.models);
  add_list(*command, option_rows::batch, options.batches);
  add_flag(*command, option_rows::quick, options.quick);
  add_value(*command, option_rows::iterations, options.training.iterations)->capture_default_str();
  add_value(*command, option_rows::warmup, options.training.warmup)->capture_default_str();
  add_value(*command, option_rows::record, options.training.record_path);
  add_flag(*command, option_rows::resume, options.resume);
  add_model_source_options(*command, options.source);
  add_output_options(*command, options.output);
  command->callback([] { run_validate(options); });
}

}  // namespace dnntune::cli
