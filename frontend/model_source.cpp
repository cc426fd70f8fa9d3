// frontend/model_source.cpp — see model_source.hpp.
#include "frontend/model_source.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "data/builtin_machines.hpp"
#include "frontend/partition_calibration.hpp"
#include "model/calibration.hpp"
#include "model/spec_model.hpp"
#include "probe/topology.hpp"

namespace dnntune::frontend {
namespace {

namespace fs = std::filesystem;

// The default calibration's request with the source's backend and budget.
pipeline::DefaultCalibrationRequest default_request(const ModelSource& source,
                                                    const pipeline::DefaultCalibrationRequest& when_uncalibrated,
                                                    const pipeline::Progress& progress) {
  pipeline::DefaultCalibrationRequest request = when_uncalibrated;
  if (!request.progress) request.progress = progress;
  request.backend = source.backend;
  // --calibration-budget is the whole first run, probe included: the first run's plan shares it
  // out among its stages (pipeline/first_run_plan.hpp), so every stage scales with it.
  if (source.calibration_budget_seconds > 0) request.first_run_seconds = source.calibration_budget_seconds;
  return request;
}

Expected<LoadedModel> measured(Expected<model::Predictor> predictor, std::vector<std::string> basis, bool here) {
  if (!predictor) return predictor.error();
  return LoadedModel{std::move(*predictor), std::move(basis), std::nullopt, here, false, {}};
}

// The checks of the source's own words, before anything is read or calibrated.
Expected<void> check_source(const ModelSource& source) {
  const std::string topology = long_name(option_rows::topology), machine = long_name(option_rows::machine);
  const std::string calibration = long_name(option_rows::calibration);
  if (!source.topology_path.empty()) {
    // A spec machine already is a node's layout: two layouts for one answer would leave one of
    // them silently unused.
    if (!source.machine.empty())
      return bad_input(topology + " and " + machine + " both describe the node: give " + machine +
                       " NAME for a spec machine, or " + topology + " FILE.xml with " + calibration +
                       " FILE for another node of a calibrated CPU");
    if (source.calibration_path.empty())
      return bad_input(topology + " needs " + calibration + " FILE: the calibration of a machine of that node's CPU");
    std::error_code error;
    if (!fs::is_regular_file(source.topology_path, error))
      return bad_input(topology + " " + source.topology_path + ": no such file");
  }
  return {};
}

}  // namespace

Expected<void> check_machine_name(const std::string& machine, const std::string& option) {
  if (machine.find_first_not_of(" \t") == std::string::npos)
    return bad_input(option + " \"" + machine + "\": name a machine (`dnntune machines`) or a profile JSON; leave " +
                     option + " out for this machine");
  return {};
}

std::string reference_directory() {
  if (const char* folder = std::getenv("DNNTUNE_REFERENCE_DIR"); folder && *folder) return folder;
  return pipeline::cache_directory() + "/references";
}

Expected<std::vector<model::ReferenceCandidate>> reference_candidates(const std::string& backend) {
  std::vector<model::ReferenceCandidate> candidates;
  for (const auto& text : data::builtin_reference_calibration_texts()) {
    if (data::is_gpu_reference_calibration(text)) continue;  // the GPU model's (cli/gpu_commands.cpp)
    auto calibration =
        model::calibration_from_json_text(text.json, std::string("<built-in reference ") + text.name + ">");
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
  return LoadedModel{
      std::move(spec->predictor), std::move(spec->basis), std::move(spec->without_prior_spread), false, false, {}};
}

Expected<model::Predictor> load_predictor(const ModelSource& source,
                                          const pipeline::DefaultCalibrationRequest& when_uncalibrated,
                                          const pipeline::Progress& progress) {
  auto loaded = load_model(source, when_uncalibrated, progress);
  if (!loaded) return loaded.error();
  return std::move(loaded->predictor);
}

Expected<LoadedModel> load_model(const ModelSource& source,
                                 const pipeline::DefaultCalibrationRequest& when_uncalibrated,
                                 const pipeline::Progress& progress) {
  if (auto checked = check_source(source); !checked) return checked.error();
  std::string calibration_path = source.calibration_path;
  if (calibration_path.empty() && !source.machine.empty()) {
    // A spec machine without a calibration: the closest reference calibration, with priors.
    auto machine = data::load_machine(source.machine);
    if (!machine) return machine.error();
    return spec_model(*machine, source.backend, std::nullopt);
  }
  std::vector<std::string> basis;
  if (calibration_path.empty() && !source.partition.empty()) {
    auto found = find_partition_calibration(source.partition, source.backend);
    if (!found) return found.error();
    if (*found) {
      auto calibration = model::read_calibration((*found)->calibration_path);
      if (!calibration) return calibration.error();
      auto loaded = measured(model::Predictor::from_calibration(std::move(*calibration)),
                             {"calibration of partition " + source.partition + ": " + (*found)->basis}, false);
      if (loaded) loaded->from_partition = true;
      return loaded;
    }
    basis.push_back("no calibration of partition " + source.partition +
                    " yet: this answer is for the machine it ran on; "
                    "dnntune calibrate --slurm --partition " +
                    source.partition + " --model NAME measures a node of it");
  }
  if (calibration_path.empty()) {
    const pipeline::DefaultCalibrationRequest request = default_request(source, when_uncalibrated, progress);
    auto cached = pipeline::default_calibration(request);
    if (!cached) return cached.error();
    if (cached->calibration_path.empty()) {
      // Nothing could be measured: the model alone, on this machine's probed profile.
      if (request.progress) request.progress("note: " + cached->note);
      auto machine = records::read_machine_profile(cached->machine_path);
      if (!machine) return machine.error();
      auto loaded = spec_model(*machine, source.backend, std::nullopt);
      if (loaded) loaded->basis.insert(loaded->basis.begin(), basis.begin(), basis.end());
      return loaded;
    }
    calibration_path = cached->calibration_path;
    basis.push_back("this machine's calibration: " + calibration_path);
  }
  auto calibration = model::read_calibration(calibration_path);
  if (!calibration) return calibration.error();
  if (calibration->backend != source.backend)
    return bad_input(calibration_path + " calibrates the " + calibration->backend + " backend, not " + source.backend +
                     " (calibrate and fit with --backend " + source.backend + ")");
  if (!source.topology_path.empty()) {
    auto node = probe::describe_topology_file(source.topology_path);
    if (!node) return node.error();
    if (records::fingerprint(*node) == records::fingerprint(calibration->machine))
      return measured(model::Predictor::from_calibration(std::move(*calibration)), basis, true);
    node->performance = calibration->machine.performance;
    node->cpu = calibration->machine.cpu;
    return spec_model(*node, source.backend, model::ReferenceCandidate{calibration_path, std::move(*calibration)});
  }
  if (source.machine.empty()) return measured(model::Predictor::from_calibration(std::move(*calibration)), basis, true);
  auto machine = data::load_machine(source.machine);
  if (!machine) return machine.error();
  if (records::fingerprint(*machine) == records::fingerprint(calibration->machine))
    return measured(model::Predictor::from_calibration(std::move(*calibration)), basis, false);
  return spec_model(*machine, source.backend, model::ReferenceCandidate{calibration_path, std::move(*calibration)});
}

}  // namespace dnntune::frontend
