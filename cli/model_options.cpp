// cli/model_options.cpp — see model_options.hpp.
#include "cli/model_options.hpp"

#include "cli/number_rules.hpp"
#include "data/builtin_machines.hpp"
#include "model/calibration.hpp"
#include "model/communication.hpp"
#include "probe/topology.hpp"

namespace dnntune::cli {

void add_model_source_options(CLI::App& command, ModelSourceOptions& options) {
  command.add_option("--calibration", options.calibration_path,
                     "A calibration made by `dnntune fit` (this machine's, or the reference for --machine)")
      ->option_text("FILE");
  command.add_option("--machine", options.machine,
                     "Predict for a built-in spec machine (`dnntune machines`) or a profile JSON, with the "
                     "--calibration's efficiencies carried over (lower confidence)")
      ->option_text("NAME|FILE.json");
  command.add_option("--backend", options.backend,
                     "The framework you train with: torch (PyTorch) or onednn (TensorFlow/MXNet-style kernels)")
      ->check(CLI::IsMember({"torch", "onednn"}))
      ->capture_default_str();
}

Expected<model::Predictor> load_predictor(const ModelSourceOptions& options,
                                          const DefaultCalibrationRequest& when_uncalibrated) {
  std::string calibration_path = options.calibration_path;
  if (calibration_path.empty() && !options.machine.empty()) {
    // A spec machine without --calibration: the built-in reference calibration's efficiencies.
    const char* reference = data::builtin_reference_calibration(options.backend);
    if (!reference)
      return bad_input("no built-in " + options.backend + " reference calibration: give --calibration FILE, the " +
                       options.backend + " calibration of a machine whose efficiencies carry over");
    auto calibration = model::calibration_from_json_text(reference, "<built-in " + options.backend + " reference>");
    if (!calibration) return calibration.error();
    auto machine = data::load_machine(options.machine);
    if (!machine) return machine.error();
    return model::Predictor::from_spec(*machine, *calibration);
  }
  if (calibration_path.empty()) {
    if (!options.topology_path.empty())
      return bad_input("--topology needs --calibration FILE: the calibration of a machine of that node's CPU");
    DefaultCalibrationRequest request = when_uncalibrated;
    request.backend = options.backend;
    auto path = default_calibration_path(request);
    if (!path) return path.error();
    calibration_path = *path;
  }
  auto calibration = model::read_calibration(calibration_path);
  if (!calibration) return calibration.error();
  if (calibration->backend != options.backend)
    return bad_input(calibration_path + " calibrates the " + calibration->backend + " backend, not " + options.backend +
                     " (calibrate and fit with --backend " + options.backend + ")");
  if (!options.topology_path.empty()) {
    auto node = probe::describe_topology_file(options.topology_path);
    if (!node) return node.error();
    if (probe::fingerprint(*node) == probe::fingerprint(calibration->machine))
      return model::Predictor::from_calibration(std::move(*calibration));
    node->performance = calibration->machine.performance;
    node->cpu = calibration->machine.cpu;
    return model::Predictor::from_spec(*node, *calibration);
  }
  if (options.machine.empty()) return model::Predictor::from_calibration(std::move(*calibration));
  auto machine = data::load_machine(options.machine);
  if (!machine) return machine.error();
  if (probe::fingerprint(*machine) == probe::fingerprint(calibration->machine))
    return model::Predictor::from_calibration(std::move(*calibration));
  return model::Predictor::from_spec(*machine, *calibration);
}

void add_configuration_options(CLI::App& command, ConfigurationOptions& options, bool with_nodes) {
  model::TrainingConfiguration& c = options.configuration;
  command.add_option("--ppn", c.processes_per_node, "Processes (ranks) per node")->capture_default_str()
      ->check(checked(rules::ranks_or_threads));
  command.add_option("--threads", c.threads_per_process, "Threads per process")->capture_default_str()
      ->check(checked(rules::ranks_or_threads));
  command.add_flag("--smt", c.smt, "Place threads on SMT siblings too (hyper-threading on)");
  command.add_option("--batch", c.batch_per_process, "Batch per process")->capture_default_str()
      ->check(checked(rules::batch_per_process));
  if (with_nodes)
    command.add_option("--nodes", c.nodes, "Nodes")->capture_default_str()->check(checked(rules::nodes));
  add_fabric_option(command, c.fabric);
  command.add_option("--ps", options.parameter_servers,
                     "Use a parameter server with this many server ranks (default: ring all-reduce)")
      ->check(checked(rules::ranks_or_threads));
  command.add_flag("--async", c.asynchronous, "Asynchronous parameter server (no barrier)");
  command.add_option("--fusion-mb", options.fusion_megabytes, "All-reduce fusion threshold in MiB")
      ->capture_default_str()->check(checked(rules::megabytes));
}

void add_fabric_option(CLI::App& command, std::string& fabric) {
  std::string fabrics;
  for (const auto& name : model::fabric_names()) fabrics += (fabrics.empty() ? "" : ", ") + name;
  command.add_option("--network", fabric, "Inter-node network: " + fabrics)
      ->capture_default_str()
      ->check(CLI::Validator(
          [fabrics](std::string& name) {
            return model::fabric_preset(name) ? std::string() : "\"" + name + "\" is not a network preset (" + fabrics + ")";
          },
          "one of " + fabrics));
}

Expected<model::TrainingConfiguration> configuration_from(const ConfigurationOptions& options) {
  model::TrainingConfiguration configuration = options.configuration;
  if (configuration.asynchronous && options.parameter_servers == 0)
    return bad_input("--async applies to a parameter server: add --ps SERVERS");
  if (options.parameter_servers > 0) {
    configuration.scheme = model::CommunicationScheme::parameter_server;
    configuration.parameter_servers = options.parameter_servers;
  }
  configuration.fusion_bytes = options.fusion_megabytes * 1024 * 1024;
  return configuration;
}

}  // namespace dnntune::cli
