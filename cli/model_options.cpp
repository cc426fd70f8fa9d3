// cli/model_options.cpp — see model_options.hpp.
#include "cli/model_options.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/number_rules.hpp"
#include "cli/slurm_calibration.hpp"
#include "data/builtin_machines.hpp"
#include "model/calibration.hpp"
#include "model/communication.hpp"
#include "model/reference_choice.hpp"
#include "model/spec_model.hpp"
#include "probe/topology.hpp"
#include "workloads/backends.hpp"

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

namespace {

namespace fs = std::filesystem;

// Every reference calibration of `backend` this dnntune knows: the built-in ones, then the
// user's; a user's file that cannot be read is an error that names it, never skipped.
Expected<std::vector<model::ReferenceCandidate>> reference_candidates(const std::string& backend) {
  std::vector<model::ReferenceCandidate> candidates;
  for (const auto& text : data::builtin_reference_calibration_texts()) {
    if (data::is_gpu_reference_calibration(text)) continue;  // the GPU model's (cli/gpu_commands.cpp)
    auto calibration = model::calibration_from_json_text(text.json, std::string("<built-in reference ") + text.name + ">");
    if (!calibration) return calibration.error();
    if (calibration->backend == backend)
      candidates.push_back({std::string("built-in reference \"") + text.name + "\"", std::move(*calibration)});
  }
  const std::string folder = reference_directory();
  std::error_code error;
  if (fs::is_directory(folder, error)) {
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(folder, error))
      if (entry.path().extension() == ".json") files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      auto calibration = model::read_calibration(file);
      if (!calibration) return calibration.error();
      if (calibration->backend == backend) candidates.push_back({file, std::move(*calibration)});
    }
  }
  return candidates;
}

// `machine` from the closest reference (or `given`), with spec priors for what it could not
// identify; the basis names all of it (model/spec_model.hpp).
Expected<LoadedModel> spec_model(const records::MachineProfile& machine, const std::string& backend,
                                 std::optional<model::ReferenceCandidate> given) {
  std::vector<model::ReferenceCandidate> candidates;
  if (given) {
    candidates.push_back(std::move(*given));
  } else {
    auto known = reference_candidates(backend);
    if (!known) return known.error();
    candidates = std::move(*known);
  }
  auto spec = model::make_spec_model(machine, candidates, backend);
  if (!spec) return spec.error();
  return LoadedModel{std::move(spec->predictor), std::move(spec->basis), std::move(spec->without_prior_spread), false,
                     false};
}

}  // namespace

std::string reference_directory() {
  if (const char* folder = std::getenv("DNNTUNE_REFERENCE_DIR"); folder && *folder) return folder;
  return pipeline::cache_directory() + "/references";
}

Expected<model::Predictor> load_predictor(const ModelSourceOptions& options,
                                          const pipeline::DefaultCalibrationRequest& when_uncalibrated) {
  auto loaded = load_model(options, when_uncalibrated);
  if (!loaded) return loaded.error();
  return std::move(loaded->predictor);
}

Expected<LoadedModel> load_model(const ModelSourceOptions& options, const pipeline::DefaultCalibrationRequest& when_uncalibrated) {
  const auto measured = [](Expected<model::Predictor> predictor, std::vector<std::string> basis,
                           bool here) -> Expected<LoadedModel> {
    if (!predictor) return predictor.error();
    return LoadedModel{std::move(*predictor), std::move(basis), std::nullopt, here, false};
  };
  std::string calibration_path = options.calibration_path;
  if (calibration_path.empty() && !options.machine.empty()) {
    // A spec machine without --calibration: the closest reference calibration, with priors.
    auto machine = data::load_machine(options.machine);
    if (!machine) return machine.error();
    return spec_model(*machine, options.backend, std::nullopt);
  }
  std::vector<std::string> basis;
  if (calibration_path.empty() && options.topology_path.empty() && !options.partition.empty()) {
    auto found = find_partition_calibration(options.partition, options.backend);
    if (!found) return found.error();
    if (*found) {
      auto calibration = model::read_calibration((*found)->calibration_path);
      if (!calibration) return calibration.error();
      auto loaded = measured(model::Predictor::from_calibration(std::move(*calibration)),
                             {"calibration of partition " + options.partition + ": " + (*found)->basis}, false);
      if (loaded) loaded->from_partition = true;
      return loaded;
    }
    basis.push_back("no calibration of partition " + options.partition + " yet: this answer is for the machine it ran on; "
                    "dnntune calibrate --slurm --partition " + options.partition + " --model NAME measures a node of it");
  }
  if (calibration_path.empty()) {
    if (!options.topology_path.empty())
      return bad_input("--topology needs --calibration FILE: the calibration of a machine of that node's CPU");
    pipeline::DefaultCalibrationRequest request = when_uncalibrated;
    request.backend = options.backend;
    if (!request.progress) request.progress = [](const std::string& line) { std::cerr << "dnntune: " << line << std::endl; };
    if (options.calibration_budget_seconds > 0) {
      request.budget_seconds = request.budget_cap_seconds = request.separating_anchor_budget_seconds =
          request.close_call_budget_seconds = options.calibration_budget_seconds;
      request.first_run_seconds = 0;  // the budgets asked for, not the default first run's limit
    }
    auto cached = pipeline::default_calibration(request);
    if (!cached) return cached.error();
    if (cached->calibration_path.empty()) {
      // Nothing could be measured: the model alone, on this machine's probed profile.
      std::cerr << "dnntune: note: " << cached->note << std::endl;
      auto machine = records::read_machine_profile(cached->machine_path);
      if (!machine) return machine.error();
      auto loaded = spec_model(*machine, options.backend, std::nullopt);
      if (loaded) loaded->basis.insert(loaded->basis.begin(), basis.begin(), basis.end());
      return loaded;
    }
    calibration_path = cached->calibration_path;
    basis.push_back("this machine's calibration: " + calibration_path);
  }
  auto calibration = model::read_calibration(calibration_path);
  if (!calibration) return calibration.error();
  if (calibration->backend != options.backend)
    return bad_input(calibration_path + " calibrates the " + calibration->backend + " backend, not " + options.backend +
                     " (calibrate and fit with --backend " + options.backend + ")");
  if (!options.topology_path.empty()) {
    auto node = probe::describe_topology_file(options.topology_path);
    if (!node) return node.error();
    if (records::fingerprint(*node) == records::fingerprint(calibration->machine))
      return measured(model::Predictor::from_calibration(std::move(*calibration)), basis, true);
    node->performance = calibration->machine.performance;
    node->cpu = calibration->machine.cpu;
    return spec_model(*node, options.backend, model::ReferenceCandidate{calibration_path, std::move(*calibration)});
  }
  if (options.machine.empty()) return measured(model::Predictor::from_calibration(std::move(*calibration)), basis, true);
  auto machine = data::load_machine(options.machine);
  if (!machine) return machine.error();
  if (records::fingerprint(*machine) == records::fingerprint(calibration->machine))
    return measured(model::Predictor::from_calibration(std::move(*calibration)), basis, false);
  return spec_model(*machine, options.backend, model::ReferenceCandidate{calibration_path, std::move(*calibration)});
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
  command.add_option("--precision", options.precision,
                     "A GPU --machine only: fp32 (strict), tf32 (PyTorch's default where the GPU has it), bf16 or "
                     "fp16 (autocast)");
  command.add_option("--memory-format", options.memory_format,
                     "A GPU --machine only: contiguous (default) or channels_last");
}

Expected<model::TrainingConfiguration> configuration_from(const ConfigurationOptions& options) {
  if (options.gpus_per_node > 0) return bad_input("--gpus applies to a GPU --machine (k80, p100, v100, a100, h100, h200)");
  if (!options.precision.empty() || !options.memory_format.empty())
    return bad_input("--precision and --memory-format apply to a GPU --machine (k80, p100, v100, a100, h100, h200)");
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
