// cli/fit_command.cpp — `dnntune fit MEASUREMENTS... -o calibration.json`: fit the cost model to
// layer (and communication) measurements and print the fit report.
#include <iostream>

#include "cli/command_support.hpp"
#include "cli/number_rules.hpp"
#include "cli/commands.hpp"
#include "cli/option_table.hpp"
#include "common/progress.hpp"
#include "cli/gpu_commands.hpp"
#include "pipeline/measurement_inputs.hpp"
#include "common/json_file.hpp"
#include "data/builtin_machines.hpp"
#include "model/fit.hpp"
#include "model/report.hpp"
#include "records/measurement.hpp"
#include "probe/peak_kernels.hpp"
#include "probe/topology.hpp"
#include "workloads/backends.hpp"

namespace dnntune::cli {
namespace {

struct FitCommandOptions {
  std::vector<std::string> inputs;
  std::string calibration_path;
  std::string machine;
  std::string backend = "torch";
  int bootstrap = model::FitOptions{}.bootstrap_replicates;
  bool json = false;
};

void run_fit(const FitCommandOptions& options) {
  const auto inputs = value_or_fail(pipeline::read_measurement_inputs(options.inputs));
  const auto progress = progress_printer("fit");
  for (const auto& file : inputs.truncated_files)
    progress(file + ": ignored a last line cut short (an interrupted run)");
  for (const auto& line : pipeline::skipped_lines_report(inputs.skipped_lines)) progress(line);
  if (inputs.records.empty()) fail(bad_input("no measurement records in " + inputs.files.front()));
  const std::vector<records::Measurement>& records = inputs.records;
  if (options.backend == "torch-cuda")
    return run_gpu_fit(records, options.machine, options.calibration_path, options.json);
  const std::string machine_file = options.machine.empty() ? inputs.machine_file : options.machine;

  records::MachineProfile machine;
  if (!machine_file.empty()) {
    machine = value_or_fail(data::load_machine(machine_file));
  } else {
    progress("no machine.json given: probing this machine for its peaks");
    machine = value_or_fail(probe::describe_this_machine());
    ok_or_fail(probe::measure_node_performance(machine, probe::PeakOptions{}));
  }
  model::FitOptions fit_options;
  fit_options.bootstrap_replicates = options.bootstrap;
  const auto calibration =
      value_or_fail(model::fit_calibration(records, machine, options.backend, inputs.files, fit_options));
  if (!options.calibration_path.empty())
    ok_or_fail(write_json_file(options.calibration_path, nlohmann::json::parse(model::to_json_text(calibration))));
  std::string text =
      options.json ? model::fit_report_json(calibration).dump(2) + "\n" : model::fit_report_text(calibration);
  if (!options.json && !options.calibration_path.empty())
    text += "Calibration written to " + options.calibration_path + "\n";
  write_output(text, "");
}

}  // namespace

void add_fit_command(CLI::App& root) {
  static FitCommandOptions options;
  CLI::App* command = root.add_subcommand(
      "fit",
      "Fit the cost model to measurements (calibrate directories or .jsonl files) and report the fit: "
      "parameters with uncertainty, held-out error per layer class and setting.");
  command->add_option("measurements", options.inputs, "calibrate -o directories or measurement .jsonl files")
      ->required()
      ->check(CLI::ExistingPath);
  add_value(*command, option_rows::output, options.calibration_path)->option_text("FILE.json")->check(output_file());
  add_value(*command, option_rows::machine, options.machine);
  add_value(*command, option_rows::backend, options.backend)
      ->check(CLI::IsMember(workloads::backend_names()))
      ->capture_default_str();
  add_value(*command, option_rows::bootstrap, options.bootstrap)->capture_default_str();
  add_flag(*command, option_rows::json, options.json);
  command->callback([] { run_fit(options); });
}

}  // namespace dnntune::cli
