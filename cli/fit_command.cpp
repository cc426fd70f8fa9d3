// cli/fit_command.cpp — `dnntune fit MEASUREMENTS... -o calibration.json`: fit the cost model to
// layer (and communication) measurements and print the fit report.
#include <sys/stat.h>

#include <fstream>
#include <iostream>

#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "common/json_file.hpp"
#include "data/builtin_machines.hpp"
#include "model/fit.hpp"
#include "model/report.hpp"
#include "probe/measurement.hpp"
#include "probe/peak_kernels.hpp"
#include "probe/topology.hpp"

namespace dnntune::cli {
namespace {

struct FitCommandOptions {
  std::vector<std::string> inputs;
  std::string calibration_path;
  std::string machine;
  std::string backend = "torch";
  int bootstrap = 24;
  bool json = false;
};

bool is_directory(const std::string& path) {
  struct stat status {};
  return stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode);
}

// The measurement files an input names: a .jsonl file, or every *.jsonl a calibrate directory
// holds (layers.jsonl, comm.jsonl). Also returns the directory's machine.json when present.
void collect_inputs(const std::string& input, std::vector<std::string>& files, std::string& machine_file) {
  if (!is_directory(input)) {
    files.push_back(input);
    return;
  }
  for (const char* name : {"layers.jsonl", "comm.jsonl", "network.jsonl"}) {
    const std::string path = input + "/" + name;
    if (std::ifstream(path).good()) files.push_back(path);
  }
  const std::string profile = input + "/machine.json";
  if (machine_file.empty() && std::ifstream(profile).good()) machine_file = profile;
  if (files.empty()) fail(bad_input(input + ": no layers.jsonl or comm.jsonl in this directory (is it a `dnntune calibrate -o` directory?)"));
}

void run_fit(const FitCommandOptions& options) {
  std::vector<std::string> files;
  std::string machine_file = options.machine;
  for (const auto& input : options.inputs) collect_inputs(input, files, machine_file);
  std::vector<probe::Measurement> records;
  for (const auto& file : files) {
    auto read = value_or_fail(probe::read_measurements(file));
    if (read.truncated_lines > 0)
      std::cerr << "dnntune fit: " << file << ": ignored a last line cut short (an interrupted run)\n";
    records.insert(records.end(), read.records.begin(), read.records.end());
  }
  if (records.empty()) fail(bad_input("no measurement records in " + files.front()));

  probe::MachineProfile machine;
  if (!machine_file.empty()) {
    machine = value_or_fail(data::load_machine(machine_file));
  } else {
    std::cerr << "dnntune fit: no machine.json given: probing this machine for its peaks\n";
    machine = value_or_fail(probe::describe_this_machine());
    ok_or_fail(probe::measure_node_performance(machine, probe::PeakOptions{}));
  }
  model::FitOptions fit_options;
  fit_options.bootstrap_replicates = options.bootstrap;
  const auto calibration = value_or_fail(model::fit_calibration(records, machine, options.backend, files, fit_options));
  if (!options.calibration_path.empty())
    ok_or_fail(write_json_file(options.calibration_path, nlohmann::json::parse(model::to_json_text(calibration))));
  std::string text = options.json ? model::fit_report_json(calibration).dump(2) + "\n"
                                  : model::fit_report_text(calibration);
  if (!options.json && !options.calibration_path.empty()) text += "Calibration written to " + options.calibration_path + "\n";
  write_output(text, "");
}

}  // namespace

void add_fit_command(CLI::App& root) {
  static FitCommandOptions options;
  CLI::App* command = root.add_subcommand(
      "fit", "Fit the cost model to measurements (calibrate directories or .jsonl files) and report the fit: "
             "parameters with uncertainty, held-out error per layer class and setting.");
  command->add_option("measurements", options.inputs, "calibrate -o directories or measurement .jsonl files")
      ->required()
      ->check(CLI::ExistingPath);
  command->add_option("-o,--output", options.calibration_path,
                      "Write the calibration here (for predict, scale, recommend); the report goes to stdout")
      ->option_text("FILE.json");
  command->add_option("--machine", options.machine,
                      "The machine profile the measurements were taken on (default: the directory's machine.json)")
      ->option_text("FILE.json|NAME");
  command->add_option("--backend", options.backend, "Fit the measurements of this backend")
      ->check(CLI::IsMember({"torch", "onednn", "torch-cuda"}))
      ->capture_default_str();
  command->add_option("--bootstrap", options.bootstrap, "Bootstrap replicates behind the uncertainty bands")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  command->add_flag("--json", options.json, "Print the fit report as JSON");
  command->callback([] { run_fit(options); });
}

}  // namespace dnntune::cli
