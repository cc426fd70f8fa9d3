// model/context_correction.cpp — see context_correction.hpp.
#include "model/context_correction.hpp"

#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

#include "common/statistics.hpp"
#include "model/anchors.hpp"
#include "model/layer_time.hpp"
#include "model/machine_rates.hpp"
#include "workloads/costs.hpp"

namespace dnntune::model {

namespace {

const char* context_pass_name(workloads::Pass pass) {
  return pass == workloads::Pass::forward ? "forward" : "backward";
}

// What the calibration gives one layer's passes of `context_pass` in isolation at `setting`:
// the micro-run measured in exactly that setting, else the fitted model, as the predictor takes
// them before any correction.
double isolated_seconds(const workloads::Layer& layer, const std::string& context_pass, std::int64_t batch,
                        const ExecutionSetting& setting, const Calibration& calibration, const MachineRates& rates) {
  const workloads::LayerCost cost = workloads::layer_cost(layer, batch);
  const LayerClass layer_class = classify(layer.spec, calibration.backend, batch, setting.threads);
  double seconds = 0;
  for (const workloads::Pass pass : workloads::all_passes) {
    if (context_pass_name(pass) != context_pass) continue;
    const workloads::PassCost& pass_cost = cost.pass(pass);
    if (pass_cost.flops == 0 && pass_cost.bytes == 0) continue;
    if (calibration.fused_passes.count(fused_pass_key(layer.spec.kind, pass_index(pass)))) continue;
    const LayerWork work{layer_class, pass_index(pass), static_cast<double>(pass_cost.flops),
                         static_cast<double>(pass_cost.bytes)};
    double pass_seconds = layer_time(work, setting, calibration.parameters, rates).total_seconds;
    const auto found = calibration.measured_layers.find(measured_layer_key(layer.descriptor, work.pass, batch));
    if (found != calibration.measured_layers.end())
      for (const MeasuredLayer& measured : found->second)
        if (measured.threads == setting.threads && measured.smt == setting.smt &&
            measured.co_running == setting.co_running)
          pass_seconds = measured.seconds;
    seconds += pass_seconds;
  }
  return seconds;
}

}  // namespace

std::vector<ContextRatio> fit_context_ratios(const std::vector<records::Measurement>& records,
                                             const Calibration& calibration) {
  std::vector<ContextRatio> ratios;
  auto rates = machine_rates(calibration.machine);
  if (!rates) return ratios;
  const std::string fingerprint = records::fingerprint(calibration.machine);
  // The run a module record belongs to: network, batch, threads, SMT, processes.
  using Run = std::tuple<std::string, std::int64_t, int, bool, int>;
  std::map<Run, std::map<std::pair<std::string, std::string>, const records::Measurement*>> runs;
  for (const records::Measurement& record : records)
    if (record.kind == records::MeasurementKind::module && record.status == records::MeasurementStatus::ok &&
        record.backend == calibration.backend && record.machine_fingerprint == fingerprint && record.nodes == 1 &&
        record.allocator == "default" && record.median_seconds > 0)
      runs[{record.network, record.batch, record.threads, record.smt, record.processes}][{record.module, record.pass}] =
          &record;

  // Per pass and threads per process: each run's in-network and isolated seconds summed over
  // all its layers. One ratio for all layer classes, not one per class: what the step adds to
  // its layers at a thread count is common to the layers, what differs per class is noise of a
  // few modules, and a class ratio learnt from a few modules in other networks misleads a
  // network made of many of them (leave-one-network-out: docs/results.md, "The sum of the layers").
  using PassThreads = std::pair<std::string, int>;
  std::map<PassThreads, std::vector<double>> log_ratios;
  std::map<PassThreads, int> module_counts;
  for (const auto& [run, modules] : runs) {
    const auto& [name, batch, threads, smt, processes] = run;
    const auto network = trained_network(*modules.begin()->second);
    if (!network) continue;
    std::map<std::string, const workloads::Layer*> layers;
    for (const workloads::Layer& layer : network->layers) layers[layer.name] = &layer;
    // Processes of one anchor share the node's package, as the calibration's co-running micro-runs.
    const ExecutionSetting setting{threads, smt, processes, 1};
    std::map<PassThreads, std::pair<double, double>> sums;  // in-network, isolated
    for (const auto& [key, record] : modules) {
      const auto found = layers.find(key.first);
      if (found == layers.end() || found->second->descriptor != record->descriptor) continue;
      const workloads::Layer& layer = *found->second;
      const double isolated = isolated_seconds(layer, key.second, batch, setting, calibration, *rates);
      if (!(isolated > 0)) continue;  // nothing of this pass in isolation (a fused pass)
      const PassThreads pass_threads{key.second, threads};
      sums[pass_threads].first += record->median_seconds;
      sums[pass_threads].second += isolated;
      ++module_counts[pass_threads];
    }
    for (const auto& [pass_threads, pair] : sums)
      log_ratios[pass_threads].push_back(std::log(pair.first / pair.second));
  }
  for (const auto& [pass_threads, logs] : log_ratios) {
    const double log_mean = mean(logs);
    // One run shows no spread: it is taken to be off elsewhere by as much as it corrects.
    const double log_sd = logs.size() > 1 ? sample_standard_deviation(logs) : std::abs(log_mean);
    ratios.push_back({pass_threads.first, std::exp(log_mean), log_sd, module_counts[pass_threads],
                      static_cast<int>(logs.size()), pass_threads.second});
  }
  return ratios;
}

const ContextRatio* find_context_ratio(const std::vector<ContextRatio>& ratios, workloads::Pass pass, int threads) {
  const ContextRatio* nearest = nullptr;
  for (const ContextRatio& ratio : ratios)
    if (ratio.pass == context_pass_name(pass) &&
        (!nearest || std::abs(ratio.threads - threads) < std::abs(nearest->threads - threads)))
      nearest = &ratio;
  return nearest;
}

}  // namespace dnntune::model
