// model/anchors.cpp — see anchors.hpp.
#include "model/anchors.hpp"

#include <map>
#include <sstream>
#include <tuple>

#include "model/predictor.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::model {
Expected<workloads::Network> trained_network(const records::Measurement& record) {
  std::istringstream words(record.command);
  for (std::string word; words >> word;)
    if (word == "--model" && words >> word)
      if (auto network = workloads::load_network(word)) return network;
  return workloads::load_network(record.network);
}

std::vector<Anchor> fit_anchors(const std::vector<records::Measurement>& records, const Calibration& calibration) {
  const std::string fingerprint = records::fingerprint(calibration.machine);
  using Key = std::tuple<std::string, std::int64_t, int, bool, int>;
  std::map<Key, std::map<std::string, const records::Measurement*>> newest;  // later records replace earlier ones
  for (const records::Measurement& record : records)
    if (record.kind == records::MeasurementKind::network && record.status == records::MeasurementStatus::ok &&
        record.backend == calibration.backend && record.machine_fingerprint == fingerprint && record.nodes == 1 &&
        record.median_seconds > 0 && record.allocator == "default")  // other allocators: model/allocation.hpp
      newest[{record.network, record.batch, record.threads, record.smt, record.processes}][record.pass] = &record;

  Calibration uncorrected = calibration;
  uncorrected.anchors.clear();
  auto predictor = Predictor::from_calibration(std::move(uncorrected));
  std::vector<Anchor> anchors;
  if (!predictor) return anchors;
  for (const auto& [key, passes] : newest) {
    if (!passes.count("forward") || !passes.count("backward") || !passes.count("iteration")) continue;
    const auto& [name, batch, threads, smt, processes] = key;
    const records::Measurement& iteration = *passes.at("iteration");
    const auto network = trained_network(iteration);
    if (!network) continue;
    TrainingConfiguration configuration;
    configuration.batch_per_process = batch;
    configuration.threads_per_process = threads;
    configuration.smt = smt;
    configuration.processes_per_node = processes;
    const auto predicted = predictor->predict(*network, configuration, false);
    if (!predicted) continue;
    Anchor anchor;
    anchor.network = name;
    anchor.batch = batch;
    anchor.threads = threads;
    anchor.smt = smt;
    anchor.processes = processes;
    anchor.steps = iteration.repetitions;
    anchor.forward_seconds = passes.at("forward")->median_seconds;
    anchor.backward_seconds = passes.at("backward")->median_seconds;
    anchor.iteration_seconds = iteration.median_seconds;
    anchor.iteration_coefficient_of_variation = iteration.coefficient_of_variation;
    anchor.layers_forward_seconds = predicted->terms.forward;
    anchor.layers_backward_seconds = predicted->terms.backward_data + predicted->terms.backward_weights;
    if (passes.count("optimizer")) anchor.optimizer_seconds = passes.at("optimizer")->median_seconds;
    anchor.streaming_seconds = predicted->terms.gradient_sums + predicted->terms.optimizer;
    anchors.push_back(anchor);
  }
  return anchors;
}

}  // namespace dnntune::model
