// cli/model_options.cpp — see model_options.hpp.
#include "cli/model_options.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/number_rules.hpp"
#include "model/communication.hpp"
#include "workloads/backends.hpp"

namespace dnntune::cli {

void add_model_source_options(CLI::App& command, ModelSourceOptions& options) {
  command.add_option("--calibration", options.calibration_path,
                     "A calibration made by `dnntune fit` (this machine's, or the reference for --machine)")
      ->option_text("FILE");
  command.add_option("--machine", options.machine,
                     "Predict for a built-in spec machine (`dnntune machines`) or a profile JSON, with the "
                     "--calibration's efficiencies carried over (lower confidence)")
      ->option_text("NAME|FILE.json")
      // An empty name is a mistake (an unset variable), never "this machine": that is no --machine.
      ->check(CLI::Validator(
          [](const std::string& name) {
            // CLI11 names the option itself: the reason alone, after frontend's "--machine \"\": ".
            auto checked = frontend::check_machine_name(name);
            if (checked) return std::string();
            const std::string& message = checked.error().message;
            return message.substr(message.find(": ") + 2);
          },
          "NAME"));
  command.add_option("--backend", options.backend,
                     "The framework you train with: torch (PyTorch) or onednn (TensorFlow/MXNet-style kernels)")
      // The node model places processes on CPU cores: the registry's CPU backends.
      ->check(CLI::IsMember(workloads::backend_names(workloads::Device::cpu)))
      ->capture_default_str();
  command.add_option("--calibration-budget", options.calibration_budget_seconds,
                     "Seconds of layer micro-runs when this machine's calibration must be made first (default: 60, "
                     "extended up to 100 when the network needs it; the probe and the anchor steps are not counted); also the "
                     "seconds for anchors at the settings that separate the top candidates (default: 90) and for runs that settle "
                     "a close call between two measured settings (default: 60); by default the whole first run ends within about 3 minutes")
      ->option_text("SECONDS")
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            const double seconds = std::strtod(text.c_str(), nullptr);
            return seconds > 0 && seconds <= 86400 ? "" : "must be more than 0 and at most 86400 seconds";
          },
          "SECONDS"));
}

void print_progress(const std::string& line) { std::cerr << "dnntune: " << line << std::endl; }

Expected<model::Predictor> load_predictor(const ModelSourceOptions& options,
                                          const pipeline::DefaultCalibrationRequest& when_uncalibrated) {
  return frontend::load_predictor(options, when_uncalibrated, print_progress);
}

Expected<LoadedModel> load_model(const ModelSourceOptions& options, const pipeline::DefaultCalibrationRequest& when_uncalibrated) {
  return frontend::load_model(options, when_uncalibrated, print_progress);
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
  add_fabric_options(command, options.fabric);
  command.add_option("--ps", options.parameter_servers,
                     "Use a parameter server with this many server ranks (default: ring all-reduce)")
      ->check(checked(rules::ranks_or_threads));
  command.add_flag("--async", c.asynchronous, "Asynchronous parameter server (no barrier)");
  command.add_option("--fusion-mb", options.fusion_megabytes, "All-reduce fusion threshold in MiB")
      ->capture_default_str()->check(checked(rules::megabytes));
  command.add_option("--gpus", options.gpus_per_node, "GPUs per node (a GPU --machine only; default 1)")
      ->check(checked(rules::ranks_or_threads));
}

Expected<model::TrainingConfiguration> configuration_from(const ConfigurationOptions& options) {
  if (options.gpus_per_node > 0) return bad_input("--gpus applies to a GPU --machine (k80, p100, v100, a100, h100, h200)");
  model::TrainingConfiguration configuration = options.configuration;
  if (configuration.asynchronous && options.parameter_servers == 0)
    return bad_input("--async applies to a parameter server: add --ps SERVERS");
  if (options.parameter_servers > 0) {
    configuration.scheme = model::CommunicationScheme::parameter_server;
    configuration.parameter_servers = options.parameter_servers;
  }
  configuration.fusion_bytes = options.fusion_megabytes * 1024 * 1024;
  auto fabric = fabric_from(options.fabric);
  if (!fabric) return fabric.error();
  configuration.fabric = *fabric;
  return configuration;
}

void add_fabric_options(CLI::App& command, FabricOptions& options) {
  std::string fabrics;
  for (const auto& name : model::fabric_names()) fabrics += (fabrics.empty() ? "" : ", ") + name;
  // --fabric is the inter-node fabric ("network" elsewhere means the DNN); --network is its
  // older name, kept so existing scripts keep working.
  auto* preset = command.add_option("--fabric,--network", options.preset, "Inter-node fabric preset: " + fabrics)
                      ->capture_default_str()
                      ->check(CLI::Validator(
                          [fabrics](std::string& name) {
                            return model::fabric_preset(name) ? std::string()
                                                              : "\"" + name + "\" is not a network preset (" + fabrics + "): give --fabric one of them, or --link-gbps";
                          },
                          "one of " + fabrics));
  auto* gbits = command.add_option("--link-gbps", options.link_gbits,
                                   "Inter-node link line rate in Gb/s (instead of --fabric; 90% of it is usable)")
                    ->option_text("GBITS");
  auto* latency = command.add_option("--link-latency-us", options.link_latency_us,
                                     "Inter-node MPI latency in microseconds (with --link-gbps)")
                      ->option_text("MICROSECONDS");
  gbits->excludes(preset);
  latency->excludes(preset);
}

Expected<std::string> fabric_from(const FabricOptions& options) {
  if (options.link_gbits.empty() && options.link_latency_us.empty()) return options.preset;
  if (options.link_gbits.empty() || options.link_latency_us.empty())
    return bad_input("--link-gbps and --link-latency-us go together (or name a --network)");
  const auto number = [](const std::string& text, const char* option) -> Expected<double> {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') return bad_input(std::string(option) + ": \"" + text + "\" is not a number");
    return value;
  };
  auto gbits = number(options.link_gbits, "--link-gbps");
  if (!gbits) return gbits.error();
  auto latency = number(options.link_latency_us, "--link-latency-us");
  if (!latency) return latency.error();
  auto fabric = model::fabric_from_numbers(*gbits, *latency);
  if (!fabric) return bad_input("--link-gbps/--link-latency-us: " + fabric.error().message);
  return fabric;
}

}  // namespace dnntune::cli
