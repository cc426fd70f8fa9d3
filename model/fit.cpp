// model/fit.cpp — see fit.hpp.
#include "model/fit.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <unordered_map>

#include <nlopt.hpp>

#include "common/statistics.hpp"
#include "model/anchors.hpp"
#include "model/context_correction.hpp"
#include "model/machine_rates.hpp"
#include "workloads/costs.hpp"

namespace dnntune::model {
namespace {

// --- the objective, over the optimiser's transformed coordinates (log for log_scale) ---

double to_coordinate(const ParameterDescriptor& info, double value) { return info.log_scale ? std::log(value) : value; }
double from_coordinate(const ParameterDescriptor& info, double coordinate) {
  return info.log_scale ? std::exp(coordinate) : coordinate;
}

double squared_log_error(const std::vector<const FitSample*>& samples, const ModelParameters& parameters,
                         const MachineRates& rates) {
  double sum = 0;
  for (const FitSample* sample : samples) {
    const double predicted = layer_time(sample->work, sample->setting, parameters, rates).total_seconds;
    const double error = std::log(predicted / sample->measured_seconds);
    sum += error * error;
  }
  return sum;
}

// Minimises over the parameters `indices` of `values` (the rest stay fixed).
void fit_block(const std::vector<const FitSample*>& samples, const MachineRates& rates, const std::vector<int>& indices,
               std::vector<double>& values, int starts, std::mt19937& random) {
  if (indices.empty() || samples.empty()) return;
  const auto& table = parameter_table();
  const unsigned dimension = static_cast<unsigned>(indices.size());
  std::vector<double> lower(dimension), upper(dimension), start(dimension);
  for (unsigned k = 0; k < dimension; ++k) {
    const ParameterDescriptor& info = table[indices[k]];
    lower[k] = to_coordinate(info, info.lower);
    upper[k] = to_coordinate(info, info.upper);
    start[k] = std::clamp(to_coordinate(info, values[indices[k]]), lower[k], upper[k]);
  }
  std::vector<double> trial = values;
  auto objective = [&](const std::vector<double>& coordinates) {
    for (unsigned k = 0; k < dimension; ++k) trial[indices[k]] = from_coordinate(table[indices[k]], coordinates[k]);
    const double error = squared_log_error(samples, unflatten(trial), rates);
    return std::isfinite(error) ? error : 1e300;
  };
  // BOBYQA needs at least two coordinates; Nelder-Mead does one fine.
  nlopt::opt optimiser(dimension >= 2 ? nlopt::LN_BOBYQA : nlopt::LN_NELDERMEAD, dimension);
  optimiser.set_lower_bounds(lower);
  optimiser.set_upper_bounds(upper);
  optimiser.set_xtol_rel(1e-5);
  optimiser.set_ftol_rel(1e-9);
  optimiser.set_maxeval(400 * static_cast<int>(dimension) + 200);
  using Objective = std::function<double(const std::vector<double>&)>;
  Objective call = objective;
  optimiser.set_min_objective([](const std::vector<double>& x, std::vector<double>&,
                                 void* data) { return (*static_cast<Objective*>(data))(x); },
                              &call);

  std::vector<double> best = start;
  double best_error = objective(start);
  for (int attempt = 0; attempt <= starts; ++attempt) {
    std::vector<double> x = start;
    if (attempt > 0)
      for (unsigned k = 0; k < dimension; ++k)
        x[k] = std::uniform_real_distribution<double>(lower[k], upper[k])(random);
    double error = 0;
    try {
      optimiser.optimize(x, error);
    } catch (const std::exception&) {
      error = objective(x);  // a round-off stop still leaves a usable point
    }
    if (error < best_error) best_error = error, best = x;
  }
  for (unsigned k = 0; k < dimension; ++k) values[indices[k]] = from_coordinate(table[indices[k]], best[k]);
}

std::string setting_group(const ExecutionSetting& setting) {
  return "threads " + std::to_string(setting.threads) + (setting.smt ? " smt" : "") + ", co-running " +
         std::to_string(setting.co_running);
}

std::vector<HeldOutError> summarise_errors(const std::map<std::string, std::vector<double>>& errors) {
  std::vector<HeldOutError> summary;
  for (const auto& [group, percentages] : errors) {
    summary.push_back({group, static_cast<int>(percentages.size()), mean(percentages)});
  }
  return summary;
}

double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = fraction * (values.size() - 1);
  const std::size_t below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(values.size() - 1, below + 1);
  return values[below] + (values[above] - values[below]) * (position - below);
}

std::optional<workloads::Pass> pass_named(const std::string& name) {
  for (workloads::Pass pass : workloads::all_passes)
    if (workloads::pass_name(pass) == name) return pass;
  return std::nullopt;
}

}  // namespace

Expected<std::vector<FitSample>> make_fit_samples(const std::vector<records::Measurement>& records,
                                                  const std::string& fingerprint, const std::string& backend,
                                                  int& ignored) {
  std::vector<FitSample> samples;
  std::unordered_map<std::string, workloads::LayerSpec> parsed;
  for (const auto& record : records) {
    // Micro-runs under another allocator (`calibrate --allocator`) time a different process state.
    if (record.kind != records::MeasurementKind::layer || record.backend != backend ||
        record.status != records::MeasurementStatus::ok || record.allocator != "default") {
      ++ignored;
      continue;
    }
    if (record.machine_fingerprint != fingerprint)
      return bad_input("a " + backend + " record of " + record.descriptor + " was measured on machine " +
                       record.machine_fingerprint + ", not on this calibration's machine " + fingerprint +
                       " (fit each machine's measurements separately)");
    auto found = parsed.find(record.descriptor);
    if (found == parsed.end()) {
      auto spec = workloads::parse_descriptor(record.descriptor);
      if (!spec) return bad_input("record of \"" + record.descriptor + "\": " + spec.error().message);
      found = parsed.emplace(record.descriptor, *spec).first;
    }
    const auto named = pass_named(record.pass);
    if (!named) return bad_input("record of " + record.descriptor + ": unknown pass \"" + record.pass + "\"");
    const workloads::Pass pass = *named;
    const workloads::PassCost cost = workloads::layer_cost(found->second, record.batch).pass(pass);
    if (cost.flops == 0 && cost.bytes == 0) {
      ++ignored;
      continue;
    }
    FitSample sample;
    sample.work = {classify(found->second, backend, record.batch, record.threads), pass_index(pass),
                   static_cast<double>(cost.flops), static_cast<double>(cost.bytes)};
    sample.setting = {record.threads, record.smt, record.processes, 1};
    sample.measured_seconds = record.median_seconds;
    sample.coefficient_of_variation = record.coefficient_of_variation;
    sample.repetitions = std::max(1, record.repetitions);
    sample.descriptor = record.descriptor;
    sample.batch = record.batch;
    samples.push_back(std::move(sample));
  }
  return samples;
}

std::vector<bool> identifiable_parameters(const std::vector<FitSample>& samples) {
  FitEvidence evidence;
  evidence.samples = static_cast<int>(samples.size());
  std::map<int, std::set<int>> core_counts;
  for (const FitSample& sample : samples) {
    ClassEvidence& of_class = evidence.of(sample.work.layer_class);
    of_class.measured_in_pass[sample.work.pass] = true;
    if (!sample.setting.smt) core_counts[static_cast<int>(sample.work.layer_class)].insert(sample.setting.threads);
    if (sample.setting.smt) of_class.with_smt = true;
    if (sample.setting.co_running > 1) of_class.co_running = true;
  }
  for (const auto& [layer_class, counts] : core_counts)
    evidence.classes[layer_class].core_counts = static_cast<int>(counts.size());
  std::vector<bool> free;
  for (const ParameterDescriptor& descriptor : parameter_table())
    free.push_back(descriptor.identifiable_from(evidence));
  return free;
}

ModelParameters fit_parameters(const std::vector<FitSample>& samples, const MachineRates& rates,
                               const std::vector<bool>& free, const ModelParameters& start, int starts, unsigned seed) {
  const auto& table = parameter_table();
  std::vector<double> values = flatten(start);
  std::mt19937 random(seed);
  // Block coordinate descent: the classes are independent given the two global parameters,
  // so each class is a small, well-conditioned fit; then the globals over all samples.
  std::vector<std::vector<const FitSample*>> by_class(layer_class_count);
  std::vector<const FitSample*> all;
  for (const FitSample& sample : samples) {
    by_class[static_cast<int>(sample.work.layer_class)].push_back(&sample);
    all.push_back(&sample);
  }
  std::vector<int> global_indices;
  for (std::size_t index = 0; index < table.size(); ++index)
    if (free[index] && table[index].layer_class == LayerClass::count_)
      global_indices.push_back(static_cast<int>(index));
  for (int round = 0; round < 3; ++round) {
    for (int layer_class = 0; layer_class < layer_class_count; ++layer_class) {
      std::vector<int> indices;
      for (std::size_t index = 0; index < table.size(); ++index)
        if (free[index] && static_cast<int>(table[index].layer_class) == layer_class)
          indices.push_back(static_cast<int>(index));
      fit_block(by_class[layer_class], rates, indices, values, round == 0 ? starts : 0, random);
    }
    fit_block(all, rates, global_indices, values, 0, random);
  }
  return unflatten(values);
}

Expected<Calibration> fit_calibration(const std::vector<records::Measurement>& records,
                                      const records::MachineProfile& machine, const std::string& backend,
                                      const std::vector<std::string>& sources, const FitOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  auto rates = machine_rates(machine);
  if (!rates) return rates.error();
  int ignored = 0;
  auto samples = make_fit_samples(records, records::fingerprint(machine), backend, ignored);
  if (!samples) return samples.error();
  if (samples->empty())
    return bad_input("no usable " + backend + " layer measurements (" + std::to_string(ignored) +
                     " records of other kinds, backends, allocators or statuses); run `dnntune calibrate --backend " +
                     backend + "`");

  Calibration calibration;
  calibration.machine = machine;
  calibration.backend = backend;
  for (const auto& record : records)
    if (record.kind == records::MeasurementKind::layer && record.backend == backend) {
      calibration.backend_version = record.backend_version;
      break;
    }
  const std::vector<bool> free = identifiable_parameters(*samples);
  calibration.parameters = fit_parameters(*samples, *rates, free, ModelParameters{}, options.starts, options.seed);

  // Cross-validation by descriptor: a layer shape is never predicted by a fit that saw it.
  std::map<std::string, std::vector<double>> by_class, by_setting;
  std::vector<double> held_out_logs;
  const int folds = std::max(2, options.folds);
  for (int fold = 0; fold < folds; ++fold) {
    std::vector<FitSample> training, held_out;
    for (const FitSample& sample : *samples)
      (std::hash<std::string>{}(sample.descriptor) % folds == static_cast<std::size_t>(fold) ? held_out : training)
          .push_back(sample);
    if (held_out.empty() || training.empty()) continue;
    const auto fold_parameters = fit_parameters(training, *rates, identifiable_parameters(training),
                                                calibration.parameters, 0, options.seed + fold);
    for (const FitSample& sample : held_out) {
      const double predicted = layer_time(sample.work, sample.setting, fold_parameters, *rates).total_seconds;
      const double percentage = 100 * std::abs(predicted - sample.measured_seconds) / sample.measured_seconds;
      by_class[class_name(sample.work.layer_class)].push_back(percentage);
      by_setting[setting_group(sample.setting)].push_back(percentage);
      held_out_logs.push_back(std::log(predicted / sample.measured_seconds));
    }
  }
  FitSummary& summary = calibration.summary;
  summary.held_out_by_class = summarise_errors(by_class);
  summary.held_out_by_setting = summarise_errors(by_setting);
  if (held_out_logs.size() > 1) summary.held_out_log_sd = sample_standard_deviation(held_out_logs);

  // Cluster bootstrap: resample whole descriptors, refit from the estimate.
  std::vector<std::string> descriptors;
  std::map<std::string, std::vector<const FitSample*>> by_descriptor;
  for (const FitSample& sample : *samples) by_descriptor[sample.descriptor].push_back(&sample);
  for (const auto& entry : by_descriptor) descriptors.push_back(entry.first);
  std::mt19937 random(options.seed);
  for (int replicate = 0; replicate < options.bootstrap_replicates; ++replicate) {
    std::vector<FitSample> resampled;
    for (std::size_t draw = 0; draw < descriptors.size(); ++draw) {
      const auto& chosen =
          by_descriptor[descriptors[std::uniform_int_distribution<std::size_t>(0, descriptors.size() - 1)(random)]];
      for (const FitSample* sample : chosen) resampled.push_back(*sample);
    }
    const auto replicate_parameters =
        fit_parameters(resampled, *rates, free, calibration.parameters, 0, options.seed + 1000 + replicate);
    calibration.bootstrap_parameters.push_back(flatten(replicate_parameters));
  }
  const auto values = flatten(calibration.parameters);
  for (std::size_t index = 0; index < values.size(); ++index) {
    std::vector<double> replicates;
    for (const auto& replicate : calibration.bootstrap_parameters) replicates.push_back(replicate[index]);
    summary.parameters.push_back({parameter_table()[index].name, values[index],
                                  free[index] ? percentile(replicates, 0.05) : values[index],
                                  free[index] ? percentile(replicates, 0.95) : values[index], !free[index]});
  }

  for (const FitSample& sample : *samples)
    calibration.measured_layers[measured_layer_key(sample.descriptor, sample.work.pass, sample.batch)].push_back(
        {sample.setting.threads, sample.setting.smt, sample.setting.co_running, sample.measured_seconds,
         sample.coefficient_of_variation, sample.repetitions});

  const std::string fingerprint = records::fingerprint(machine);
  for (const auto& record : records)
    if (record.kind == records::MeasurementKind::layer && record.backend == backend &&
        record.status == records::MeasurementStatus::unimplemented && record.machine_fingerprint == fingerprint)
      if (const auto pass = pass_named(record.pass))
        if (const auto spec = workloads::parse_descriptor(record.descriptor))
          calibration.fused_passes.insert(fused_pass_key(spec->kind, pass_index(*pass)));

  auto intra = fit_allreduce_link(records, false);
  calibration.links.intra_node = intra ? *intra : default_intra_node_link();
  auto inter = fit_allreduce_link(records, true);
  calibration.links.inter_node =
      inter ? *inter : LinkModel{0, 0, false, "no inter-node records: the --network preset is used"};

  calibration.anchors = fit_anchors(records, calibration);
  calibration.context_ratios = fit_context_ratios(records, calibration);
  calibration.allocation = fit_allocation_from_records(records, calibration.machine, calibration.backend);

  summary.samples = static_cast<int>(samples->size());
  summary.records_ignored = ignored;
  summary.sources = sources;
  summary.fit_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return calibration;
}

}  // namespace dnntune::model
