// model/anchors.cpp — see anchors.hpp.
#include "model/anchors.hpp"

#include <cmath>
#include <map>
#include <tuple>

#include "common/statistics.hpp"
#include "model/predictor.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::model {
Expected<workloads::Network> trained_network(const records::Measurement& record) {
  if (!record.network_source.empty())
    if (auto network = workloads::load_network(record.network_source)) return network;
  return workloads::load_network(record.network);
}

std::vector<Anchor> fit_anchors(const std::vector<records::Measurement>& records, const Calibration& calibration) {
  const std::string fingerprint = records::fingerprint(calibration.machine);
  using Key = std::tuple<std::string, std::int64_t, int, bool, int>;
  using Run = std::map<std::string, const records::Measurement*>;  // by pass
  // A run writes its passes together, so a pass seen again for a setting starts its next run.
  std::map<Key, std::vector<Run>> runs;
  for (const records::Measurement& record : records)
    if (record.kind == records::MeasurementKind::network && record.status == records::MeasurementStatus::ok &&
        record.backend == calibration.backend && record.machine_fingerprint == fingerprint && record.nodes == 1 &&
        record.median_seconds > 0 && record.allocator == "default") {  // other allocators: model/allocation.hpp
      std::vector<Run>& setting = runs[{record.network, record.batch, record.threads, record.smt, record.processes}];
      if (setting.empty() || setting.back().count(record.pass)) setting.emplace_back();
      setting.back()[record.pass] = &record;
    }

  Calibration uncorrected = calibration;
  uncorrected.anchors.clear();
  auto predictor = Predictor::from_calibration(std::move(uncorrected));
  std::vector<Anchor> anchors;
  if (!predictor) return anchors;
  for (const auto& [key, setting_runs] : runs) {
    std::vector<const Run*> complete;
    for (const Run& run : setting_runs)
      if (run.count("forward") && run.count("backward") && run.count("iteration")) complete.push_back(&run);
    if (complete.empty()) continue;
    // The runs its figures are the median of. Every other setting is trained by the C++ trainer
    // alone, so a run by PyTorch from Python (train --runner python, whose step differs from the
    // C++ trainer's by network) is pooled only as the third of three, where it drops a C++
    // process in glibc's slow mode and cannot shift the setting against the others. Next to one
    // C++ run it would make the median the two trainers' mean and tilt this setting against the
    // settings the C++ trainer alone measured (figures: docs/results.md, "Anchors").
    std::vector<const Run*> pooled_runs;
    for (const Run* run : complete)
      if (records::trained_by_cpp_trainer(*run->at("iteration"))) pooled_runs.push_back(run);
    if (pooled_runs.size() != 1) pooled_runs = complete;
    const auto& [name, batch, threads, smt, processes] = key;
    const auto network = trained_network(*complete.back()->at("iteration"));
    if (!network) continue;
    TrainingConfiguration configuration;
    configuration.batch_per_process = batch;
    configuration.threads_per_process = threads;
    configuration.smt = smt;
    configuration.processes_per_node = processes;
    const auto predicted = predictor->predict(*network, configuration, false);
    if (!predicted) continue;
    // A figure of a pass over the runs that recorded it (the anchor takes their median).
    const auto pooled = [&pooled_runs](const std::string& pass,
                                       double records::Measurement::*figure = &records::Measurement::median_seconds) {
      std::vector<double> values;
      for (const Run* run : pooled_runs)
        if (run->count(pass)) values.push_back(run->at(pass)->*figure);
      return values;
    };
    const std::vector<double> iterations = pooled("iteration");
    // The spread is every run's, both trainers': the band is to hold what users' PyTorch runs too.
    std::vector<double> log_iterations;
    for (const Run* run : complete) log_iterations.push_back(std::log(run->at("iteration")->median_seconds));
    Anchor anchor;
    anchor.network = name;
    anchor.batch = batch;
    anchor.threads = threads;
    anchor.smt = smt;
    anchor.processes = processes;
    for (const Run* run : complete) anchor.steps += run->at("iteration")->repetitions;
    anchor.forward_seconds = median(pooled("forward"));
    anchor.backward_seconds = median(pooled("backward"));
    anchor.iteration_seconds = median(iterations);
    anchor.iteration_coefficient_of_variation =
        median(pooled("iteration", &records::Measurement::coefficient_of_variation));
    anchor.runs = static_cast<int>(complete.size());
    // Not a robust spread: a process's step time is bimodal under glibc's defaults, an occasional
    // process runs far slower, and the next run may be such a process; 1.4826 x MAD would leave it
    // out of the band the next run must fall in (docs/results.md, "Anchors").
    anchor.between_runs_log_sd = sample_standard_deviation(log_iterations);
    anchor.layers_forward_seconds = predicted->terms.forward;
    anchor.layers_backward_seconds = predicted->terms.backward_data + predicted->terms.backward_weights;
    if (const auto optimizer = pooled("optimizer"); !optimizer.empty()) anchor.optimizer_seconds = median(optimizer);
    anchor.streaming_seconds = predicted->terms.gradient_sums + predicted->terms.optimizer;
    anchors.push_back(anchor);
  }
  return anchors;
}

AnchorMedian median_over_anchors(const std::vector<Anchor>& anchors, const std::string& network,
                                 const std::function<std::optional<double>(const Anchor&)>& figure) {
  std::vector<double> own, any;
  for (const Anchor& anchor : anchors)
    if (const auto value = figure(anchor)) {
      any.push_back(*value);
      if (anchor.network == network) own.push_back(*value);
    }
  const std::vector<double>& used = own.empty() ? any : own;
  return {median(used), used.size(), !own.empty()};
}

double between_processes_log_sd(const std::vector<Anchor>& anchors, const std::string& network) {
  return median_over_anchors(anchors, network,
                             [](const Anchor& anchor) -> std::optional<double> {
                               if (anchor.runs < 2 || !std::isfinite(anchor.between_runs_log_sd)) return std::nullopt;
                               return anchor.between_runs_log_sd;
                             })
      .value;
}

}  // namespace dnntune::model
