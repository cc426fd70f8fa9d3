// tests/model_fixtures.cpp — see model_fixtures.hpp.
#include "tests/model_fixtures.hpp"

#include <cmath>
#include <fstream>
#include <random>
#include <stdexcept>

#include "model/layer_time.hpp"
#include "model/machine_rates.hpp"
#include "model/predictor.hpp"
#include "workloads/costs.hpp"

namespace dnntune::test {

using namespace dnntune::model;

// A measured 1-package 4-core SMT-2 machine.
records::MachineProfile test_machine() {
  records::MachineProfile machine;
  machine.name = "test-node";
  machine.origin = records::ProfileOrigin::probe;
  machine.cpu.model = "Test CPU";
  machine.topology.packages = 1;
  machine.topology.numa_nodes = 1;
  machine.topology.cores = 4;
  machine.topology.pus = 8;
  machine.topology.cores_per_package = 4;
  machine.topology.pus_per_core = 2;
  machine.performance.peak_fp32_gflops_per_core = records::Figure{100, records::Provenance::measured, 0.01, 7, ""};
  for (int cores = 1; cores <= 4; ++cores)
    machine.performance.triad_scaling.push_back({cores, cores, false, std::min(12.0 * cores, 30.0), 0.02, 7});
  return machine;
}

// The parameters the synthetic measurements are made with.
ModelParameters true_parameters() {
  ModelParameters parameters;
  auto& conv = parameters.of(LayerClass::conv_spatial);
  conv.efficiency[0] = 0.6, conv.efficiency[1] = 0.45, conv.efficiency[2] = 0.4;
  conv.overhead_seconds[0] = conv.overhead_seconds[1] = conv.overhead_seconds[2] = 2e-5;
  conv.contention = 0.08;
  conv.smt_gain = 0.15;
  conv.corun_slowdown = 0.05;
  auto& bnorm = parameters.of(LayerClass::batch_norm);
  bnorm.efficiency[0] = bnorm.efficiency[1] = bnorm.efficiency[2] = 0.05;
  bnorm.contention = 0.2;
  parameters.bandwidth_efficiency = 0.7;
  parameters.smooth_max_exponent = 2.5;
  return parameters;
}

std::vector<records::Measurement> synthetic_records(const records::MachineProfile& machine, double noise,
                                                    unsigned seed) {
  const auto rates = *machine_rates(machine);
  const auto parameters = true_parameters();
  std::mt19937 random(seed);
  std::normal_distribution<double> log_noise(0, noise);
  std::vector<records::Measurement> records;
  const std::vector<std::string> descriptors = {"conv:ic64ih56iw56oc64kh3kw3sh1ph1",
                                                "conv:ic128ih28iw28oc128kh3kw3sh1ph1",
                                                "conv:ic256ih14iw14oc256kh3kw3sh1ph1",
                                                "conv:ic3ih224iw224oc64kh7kw7sh2ph3",
                                                "conv:ic512ih7iw7oc512kh3kw3sh1ph1",
                                                "conv:ic32ih35iw35oc64kh3kw3sh1ph1",
                                                "bnorm:ic64ih56iw56",
                                                "bnorm:ic256ih14iw14",
                                                "bnorm:ic128ih28iw28",
                                                "bnorm:ic512ih7iw7"};
  const struct {
    int threads;
    bool smt;
    int co_running;
  } settings[] = {{1, false, 1}, {2, false, 1}, {4, false, 1}, {2, true, 1}, {1, false, 2}, {1, false, 4}};
  for (const auto& descriptor : descriptors) {
    const auto spec = *workloads::parse_descriptor(descriptor);
    for (workloads::Pass pass : workloads::all_passes)
      for (const auto& setting : settings) {
        const auto cost = workloads::layer_cost(spec, 8).pass(pass);
        const LayerWork work{classify(spec, "torch", 8, setting.threads), pass_index(pass),
                             static_cast<double>(cost.flops), static_cast<double>(cost.bytes)};
        records::Measurement record;
        record.backend = "torch";
        record.machine_fingerprint = records::fingerprint(machine);
        record.descriptor = descriptor;
        record.pass = workloads::pass_name(pass);
        record.batch = 8;
        record.threads = setting.threads;
        record.smt = setting.smt;
        record.processes = setting.co_running;
        record.median_seconds =
            layer_time(work, {setting.threads, setting.smt, setting.co_running, 1}, parameters, rates).total_seconds *
            std::exp(log_noise(random));
        record.coefficient_of_variation = noise;
        record.repetitions = 9;
        records.push_back(record);
      }
  }
  return records;
}

FitOptions fixture_fit_options(int bootstrap_replicates) {
  FitOptions options;
  options.bootstrap_replicates = bootstrap_replicates;
  options.folds = 2;
  options.starts = 0;
  return options;
}

Calibration every_layer_measured(const workloads::Network& network) {
  const FitOptions options = fixture_fit_options();
  const auto machine = test_machine();
  auto calibration = fit_calibration(synthetic_records(machine, 0.01, 5), machine, "torch", {"synthetic"}, options);
  if (!calibration) throw std::runtime_error("the synthetic fit failed: " + calibration.error().message);
  for (const workloads::Layer& layer : network.layers) {
    const workloads::LayerCost cost = workloads::layer_cost(layer, 8);
    for (const workloads::Pass pass : workloads::all_passes)
      if (cost.pass(pass).flops > 0 || cost.pass(pass).bytes > 0)
        calibration->measured_layers[measured_layer_key(layer.descriptor, pass_index(pass), 8)] = {
            {1, false, 1, measured_pass_seconds, 0.02, 5}};
  }
  return *calibration;
}

TrainingConfiguration one_thread_at(std::int64_t batch) {
  TrainingConfiguration configuration;
  configuration.batch_per_process = batch;
  return configuration;
}

Anchor anchor_at(const Calibration& calibration, const workloads::Network& network,
                 const TrainingConfiguration& configuration, double ratio) {
  Calibration uncorrected = calibration;
  uncorrected.anchors.clear();
  const auto predicted = Predictor::from_calibration(uncorrected)->predict(network, configuration, false);
  if (!predicted) throw std::runtime_error("anchor_at: no prediction: " + predicted.error().message);
  Anchor anchor;
  anchor.network = network.name;
  anchor.batch = configuration.batch_per_process;
  anchor.threads = configuration.threads_per_process;
  anchor.processes = configuration.processes_per_node;
  anchor.steps = 2;
  anchor.layers_forward_seconds = predicted->terms.forward;
  anchor.layers_backward_seconds = predicted->terms.backward_data + predicted->terms.backward_weights;
  anchor.forward_seconds = ratio * anchor.layers_forward_seconds;
  anchor.backward_seconds = ratio * anchor.layers_backward_seconds;
  anchor.iteration_seconds = predicted->iteration_seconds - anchor.layers_forward_seconds -
                             anchor.layers_backward_seconds + anchor.forward_seconds + anchor.backward_seconds;
  anchor.iteration_coefficient_of_variation = 0.02;
  return anchor;
}

void write_measurement_directory(const std::string& directory) {
  const auto machine = test_machine();
  std::ofstream(directory + "/machine.json") << records::to_json_text(machine);
  std::ofstream records_file(directory + "/layers.jsonl");
  for (const auto& record : synthetic_records(machine, 0.02, 11)) records_file << records::to_json_line(record) << "\n";
}

}  // namespace dnntune::test
