// cli/model_options.cpp — see model_options.hpp.
#include "cli/model_options.hpp"

#include "common/progress.hpp"
#include "common/text_format.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/number_rules.hpp"
#include "cli/option_table.hpp"
#include "data/builtin_machines.hpp"
#include "model/communication.hpp"
#include "workloads/backends.hpp"

namespace dnntune::cli {

void add_model_source_options(CLI::App& command, ModelSourceOptions& options) {
  add_value(command, option_rows::calibration, options.calibration_path);
  add_value(command, option_rows::machine, options.machine)
      // An empty name is a mistake (an unset variable), never "this machine": that is no --machine.
      ->check(CLI::Validator(
          [](const std::string& name) {
            // CLI11 names the option itself: the reason alone, after frontend's option name and value.
            auto checked = frontend::check_machine_name(name);
            if (checked) return std::string();
            const std::string& message = checked.error().message;
            return message.substr(message.find(": ") + 2);
          },
          "NAME"));
  add_value(command, option_rows::backend, options.backend)
      // The node model places processes on CPU cores: the registry's CPU backends.
      ->check(CLI::IsMember(workloads::backend_names(workloads::Device::cpu)))
      ->capture_default_str();
  add_value(command, option_rows::calibration_budget, options.calibration_budget_seconds);
}

Expected<model::Predictor> load_predictor(const ModelSourceOptions& options,
                                          const pipeline::DefaultCalibrationRequest& when_uncalibrated) {
  return frontend::load_predictor(options, when_uncalibrated, print_progress);
}

Expected<LoadedModel> load_model(const ModelSourceOptions& options,
                                 const pipeline::DefaultCalibrationRequest& when_uncalibrated) {
  return frontend::load_model(options, when_uncalibrated, print_progress);
}

void add_configuration_options(CLI::App& command, ConfigurationOptions& options, bool with_nodes) {
  model::TrainingConfiguration& c = options.configuration;
  add_value(command, option_rows::processes_per_node, c.processes_per_node)->capture_default_str();
  add_value(command, option_rows::threads, c.threads_per_process)->capture_default_str();
  add_flag(command, option_rows::smt, c.smt);
  add_value(command, option_rows::batch, c.batch_per_process)->capture_default_str();
  if (with_nodes) add_value(command, option_rows::nodes, c.nodes)->capture_default_str();
  add_fabric_options(command, options.fabric);
  add_value(command, option_rows::parameter_servers, options.parameter_servers);
  add_flag(command, option_rows::asynchronous, c.asynchronous);
  add_value(command, option_rows::fusion_megabytes, options.fusion_megabytes)->capture_default_str();
  add_value(command, option_rows::gpus, options.gpus_per_node);
  add_value(command, option_rows::precision, options.precision);
  add_value(command, option_rows::memory_format, options.memory_format);
}

std::string gpu_only_options_refused(bool gpus) {
  const std::string options = gpus ? long_name(option_rows::gpus) + " applies"
                                   : long_names({&option_rows::precision, &option_rows::memory_format}) + " apply";
  return options + " to a GPU " + long_name(option_rows::machine) + " (" + data::builtin_gpu_machine_names() + ")";
}

std::string gpu_node_options() {
  return long_names({&option_rows::gpus, &option_rows::batch, &option_rows::nodes, &option_rows::fusion_megabytes});
}

Expected<model::TrainingConfiguration> configuration_from(const ConfigurationOptions& options) {
  if (options.gpus_per_node > 0) return bad_input(gpu_only_options_refused(true));
  if (!options.precision.empty() || !options.memory_format.empty()) return bad_input(gpu_only_options_refused(false));
  model::TrainingConfiguration configuration = options.configuration;
  if (configuration.asynchronous && options.parameter_servers == 0)
    return bad_input(long_name(option_rows::asynchronous) + " applies to a parameter server: add " +
                     long_name(option_rows::parameter_servers) + " SERVERS");
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

frontend::GivenLayout given_layout(const CLI::App& command, const ConfigurationOptions& options) {
  return {command.count(long_name(option_rows::processes_per_node)) > 0,
          command.count(long_name(option_rows::threads)) > 0, options.configuration.smt};
}

std::string setup_allocator_text(const tuner::AllocatorChoice& allocator) {
  return allocator.modelled || allocator.chosen_by == "user" ? tuner::allocator_text(allocator) : "";
}

void add_fabric_options(CLI::App& command, FabricOptions& options) {
  std::string fabrics;
  for (const auto& name : model::fabric_names()) fabrics += (fabrics.empty() ? "" : ", ") + name;
  // --fabric is the inter-node fabric ("network" elsewhere means the DNN); --network is its
  // older name, kept so existing scripts keep working.
  auto* preset = add_value(command, option_rows::fabric, options.preset)
                     ->description(std::string(option_rows::fabric.help) + ": " + fabrics)
                     ->capture_default_str()
                     ->check(CLI::Validator(
                         [fabrics](std::string& name) {
                           return model::fabric_preset(name) ? std::string()
                                                             : "\"" + name + "\" is not a network preset (" + fabrics +
                                                                   "): give --fabric one of them, or --link-gbps";
                         },
                         "one of " + fabrics));
  auto* gbits = add_value(command, option_rows::link_gbits, options.link_gbits);
  auto* latency = add_value(command, option_rows::link_latency_us, options.link_latency_us);
  gbits->excludes(preset);
  latency->excludes(preset);
}

Expected<std::string> fabric_from(const FabricOptions& options) {
  if (options.link_gbits.empty() && options.link_latency_us.empty()) return options.preset;
  if (options.link_gbits.empty() || options.link_latency_us.empty())
    return bad_input(long_names({&option_rows::link_gbits, &option_rows::link_latency_us}) +
                     " go together (or name a " + long_name(option_rows::fabric) + ")");
  // Checked by the grammar when parsed (the option rows); read again here as numbers.
  auto gbits = parse_checked(options.link_gbits, rules::link_gbits);
  if (!gbits) return bad_input(long_name(option_rows::link_gbits) + ": " + gbits.error().message);
  auto latency = parse_checked(options.link_latency_us, rules::link_latency_us);
  if (!latency) return bad_input(long_name(option_rows::link_latency_us) + ": " + latency.error().message);
  auto fabric = model::fabric_from_numbers(*gbits, *latency);
  if (!fabric)
    return bad_input(long_name(option_rows::link_gbits) + "/" + long_name(option_rows::link_latency_us) + ": " +
                     fabric.error().message);
  return fabric;
}

}  // namespace dnntune::cli
