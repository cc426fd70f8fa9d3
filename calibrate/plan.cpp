// calibrate/plan.cpp — see plan.hpp.
#include "calibrate/plan.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "calibrate/layer_operands.hpp"
#include "probe/peak_kernels.hpp"
#include "records/measurement.hpp"
#include "workloads/backends.hpp"
#include "workloads/kernel_class.hpp"

namespace dnntune::calibrate {

using workloads::LayerSpec;
using workloads::Pass;

namespace {

// Priorities (see plan.hpp): base-setting layers below other_settings_priority, then the
// extremes of each class at the other settings, then whole-network runs, then the rest.
constexpr int other_settings_priority = 1000;
constexpr int whole_network_priority = other_settings_priority + 2;

// Positions 0..count-1 of a size-sorted class in the order they are sampled: the largest, the
// smallest, then midpoints of ever finer intervals.
std::vector<std::size_t> spread_order(std::size_t count) {
  std::vector<std::size_t> order;
  if (count == 0) return order;
  std::vector<bool> taken(count, false);
  const auto take = [&](std::size_t index) {
    if (!taken[index]) taken[index] = true, order.push_back(index);
  };
  take(count - 1);
  take(0);
  std::deque<std::pair<std::size_t, std::size_t>> intervals{{0, count - 1}};
  while (!intervals.empty()) {
    const auto [low, high] = intervals.front();
    intervals.pop_front();
    if (high - low < 2) continue;
    const std::size_t middle = (low + high) / 2;
    take(middle);
    intervals.push_back({low, middle});
    intervals.push_back({middle, high});
  }
  return order;
}

struct DistinctLayer {
  std::string descriptor;
  LayerSpec spec;
  int spread_rank = 0;             // position in its class's spread order
  bool backward_data_used = true;  // some network computes its data gradient
  bool backward_used = true;       // some network runs its backward at all
};

std::vector<DistinctLayer> distinct_layers_of(const std::vector<workloads::Network>& networks,
                                              const std::vector<LayerSpec>& extra_layers) {
  std::vector<DistinctLayer> layers;
  std::map<std::string, std::size_t> position;
  // Passes no network runs are not measured (the first convolution's backward-data: the
  // image needs no gradient); layers given on their own get every pass.
  for (const auto& network : networks)
    for (const auto& layer : network.layers) {
      if (!has_pass(layer.spec, Pass::forward)) continue;  // the input, flatten: nothing to time
      const auto [found, inserted] = position.emplace(layer.descriptor, layers.size());
      if (inserted) layers.push_back({layer.descriptor, layer.spec, 0, false, false});
      layers[found->second].backward_data_used |= layer.computes_data_gradient;
      layers[found->second].backward_used |= layer.runs_backward;
    }
  for (const auto& spec : extra_layers) {
    const auto [found, inserted] = position.emplace(workloads::to_descriptor(spec), layers.size());
    if (inserted) layers.push_back({found->first, spec, 0, true, true});
    layers[found->second].backward_data_used = layers[found->second].backward_used = true;
  }
  // Rank within each class by size: FLOPs, then bytes, of the forward pass of one image.
  std::map<std::string, std::vector<std::size_t>> classes;
  for (std::size_t index = 0; index < layers.size(); ++index) classes[layer_class(layers[index].spec)].push_back(index);
  for (auto& [name, members] : classes) {
    std::stable_sort(members.begin(), members.end(), [&](std::size_t left, std::size_t right) {
      const auto a = workloads::layer_cost(layers[left].spec, 1).forward;
      const auto b = workloads::layer_cost(layers[right].spec, 1).forward;
      return std::pair(a.flops, a.bytes) < std::pair(b.flops, b.bytes);
    });
    const auto order = spread_order(members.size());
    for (std::size_t rank = 0; rank < order.size(); ++rank)
      layers[members[order[rank]]].spread_rank = static_cast<int>(rank);
  }
  return layers;
}

const workloads::Network* find_network(const std::vector<workloads::Network>& networks, const std::string& name) {
  for (const auto& network : networks)
    if (network.name == name) return &network;
  return nullptr;
}

std::size_t setting_index(const std::vector<Setting>& settings, const Setting& setting) {
  return static_cast<std::size_t>(std::find(settings.begin(), settings.end(), setting) - settings.begin());
}

// Whether the framework runs `spec` on another kernel at settings[index] than at the base
// setting, and that setting is the first with its thread count and SMT (one process): there a
// dispatch cliff lives that no measurement at the base setting shows (libtorch's own 1x1
// convolution at one thread runs orders of magnitude slower than oneDNN's at two), so the extremes of the class
// are measured there as early as at the base setting. Other co-running counts take it from there.
bool changes_kernel(const LayerSpec& spec, const std::string& backend, std::int64_t batch,
                    const std::vector<Setting>& settings, std::size_t index) {
  const workloads::BackendTraits* traits = workloads::find_backend(backend);
  if (!traits || index == 0 || index >= settings.size()) return false;
  const Setting& setting = settings[index];
  for (std::size_t earlier = 1; earlier < index; ++earlier)
    if (settings[earlier].threads == setting.threads && settings[earlier].smt == setting.smt) return false;
  return workloads::dispatched_class(spec, *traits, batch, setting.threads) !=
         workloads::dispatched_class(spec, *traits, batch, settings.front().threads);
}

}  // namespace

std::string to_string(const Setting& setting) {
  std::string text = std::to_string(setting.threads) + (setting.threads == 1 ? " thread" : " threads");
  if (setting.smt) text += " smt";
  if (setting.processes > 1) text += " x " + std::to_string(setting.processes) + " processes";
  return text;
}

std::vector<Setting> grid_settings(int cores, int smt_ways) {
  std::vector<Setting> settings;
  const auto add = [&](Setting setting) {
    if (std::find(settings.begin(), settings.end(), setting) == settings.end()) settings.push_back(setting);
  };
  add({cores, false, 1});
  const auto counts = probe::core_counts_to_measure(cores);
  for (const int count : counts) add({count, false, 1});
  if (smt_ways > 1)
    for (const int count : counts) add({count * smt_ways, true, 1});
  for (const int processes : counts) {
    if (processes < 2) continue;
    add({1, false, processes});
    add({cores / processes, false, processes});
    if (smt_ways > 1) add({cores / processes * smt_ways, true, processes});
  }
  return settings;
}

std::string layer_class(const LayerSpec& spec) {
  return std::string(workloads::shape_name(workloads::kernel_shape(spec)));
}

probe::TimingOptions layer_timing(int operand_sets) {
  probe::TimingOptions options;
  // A run allocates its outputs before the set's previous ones are freed: operand_sets + 1 of
  // them circulate, and each is first touched (page faults) in the first operand_sets + 1 runs.
  options.warmup_runs = std::max(1, operand_sets) + 1;
  options.min_repetitions = 3;
  options.max_repetitions = 20;
  options.min_total_seconds = 0.05;
  return options;
}

probe::TimingOptions network_timing() {
  probe::TimingOptions options;
  options.warmup_runs = 1;
  options.min_repetitions = 3;
  options.max_repetitions = 3;
  options.min_total_seconds = 0;
  return options;
}

namespace {

constexpr double page_bytes = 4096;

// What first touching one page costs a process of `setting`: co-running processes fault their own
// memory at once, each at the all-cores rate.
double fault_seconds_per_page(const Setting& setting, const SpeedModel& speed) {
  return setting.processes > 1 ? speed.first_touch_seconds_per_page_all_cores : speed.first_touch_seconds_per_page;
}

// What one measurement costs: one run (no set-up, no warm-up) and the faults each run adds, its
// set-up, and its operand sets.
struct MeasurementCost {
  double run = 0;
  double run_faults = 0;
  double setup = 0;
  int operand_sets = 1;
};

MeasurementCost measurement_cost(const PlannedMeasurement& measurement, const SpeedModel& speed,
                                 const std::vector<workloads::Network>& networks) {
  workloads::PassCost cost;
  MeasurementCost result;
  result.setup = speed.setup_seconds;
  const Setting& setting = measurement.setting;
  const double per_page = fault_seconds_per_page(setting, speed);
  double faulted_per_run = 0;  // bytes
  if (measurement.whole_network) {
    const auto* network = find_network(networks, measurement.network);
    if (network) {
      const auto totals = workloads::network_cost(*network, measurement.batch);
      if (totals) cost = totals->training();
      result.setup = speed.network_setup_seconds;
    }
  } else {
    cost = workloads::layer_cost(measurement.spec, measurement.batch).pass(measurement.pass);
    const PassOperands operands = pass_operands(measurement.spec, measurement.batch, measurement.pass);
    result.operand_sets = operand_sets_for_cold_cache(operands, measurement.pass, speed.last_level_cache_bytes);
    // Set-up fills the rotating operands of each set and one copy of the rest; the warm-up runs
    // fault in the outputs that circulate (layer_timing); outputs glibc maps afresh fault every run.
    double filled = 0;
    for (const Operand& operand : operands.inputs)
      filled += 4.0 * static_cast<double>(operand.elements()) *
                (operand_just_written(operand.name, measurement.pass) ? 1 : result.operand_sets);
    for (const Operand& operand : operands.outputs) {
      const double bytes = 4.0 * static_cast<double>(operand.elements());
      if (bytes >= static_cast<double>(settled_mmap_threshold_bytes))
        faulted_per_run += bytes;
      else
        filled += bytes * (result.operand_sets + 1);
    }
    result.setup += filled / page_bytes * per_page;
  }
  const double cores = std::max(1, setting.cores_per_process(speed.smt_ways));
  const double compute =
      static_cast<double>(cost.flops) / (speed.peak_gflops_per_core * 1e9 * speed.efficiency * cores);
  const double memory = static_cast<double>(cost.bytes) * setting.processes / (speed.bandwidth_gbs * 1e9);
  result.run = std::max(compute, memory) + speed.run_overhead_seconds;
  result.run_faults = faulted_per_run / page_bytes * per_page;
  return result;
}

}  // namespace

double estimate_run_seconds(const PlannedMeasurement& measurement, const SpeedModel& speed,
                            const std::vector<workloads::Network>& networks) {
  return measurement_cost(measurement, speed, networks).run;
}

double estimate_run_fault_seconds(const PlannedMeasurement& measurement, const SpeedModel& speed,
                                  const std::vector<workloads::Network>& networks) {
  return measurement_cost(measurement, speed, networks).run_faults;
}

double estimate_first_step_fault_seconds(const workloads::Network& network, std::int64_t batch, const Setting& setting,
                                         const SpeedModel& speed) {
  const auto cost = workloads::network_cost(network, batch);
  if (!cost) return 0;
  return cost->training_memory_bytes() / page_bytes * fault_seconds_per_page(setting, speed);
}

double estimate_seconds(const PlannedMeasurement& measurement, const SpeedModel& speed,
                        const std::vector<workloads::Network>& networks) {
  const MeasurementCost cost = measurement_cost(measurement, speed, networks);
  const probe::TimingOptions timing = measurement.whole_network ? network_timing() : layer_timing(cost.operand_sets);
  const double run = cost.run + cost.run_faults;
  const double repetitions =
      std::clamp(std::ceil(timing.min_total_seconds / run), static_cast<double>(timing.min_repetitions),
                 static_cast<double>(timing.max_repetitions));
  return cost.setup + (timing.warmup_runs + repetitions) * run;
}

std::vector<PlannedMeasurement> select_within_budget(std::vector<PlannedMeasurement> candidates, double budget_seconds,
                                                     const std::function<double(const PlannedMeasurement&)>& seconds) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& left, const auto& right) { return left.priority < right.priority; });
  std::vector<PlannedMeasurement> kept;
  double total = 0;
  for (auto& candidate : candidates) {
    const double cost = seconds(candidate);
    if (total + cost > budget_seconds) continue;
    total += cost;
    kept.push_back(std::move(candidate));
  }
  return kept;
}

void order_for_running(std::vector<PlannedMeasurement>& measurements, const std::vector<Setting>& settings) {
  const auto group = [&](const PlannedMeasurement& measurement) {
    const std::size_t setting = setting_index(settings, measurement.setting);
    // The class extremes where another kernel runs (changes_kernel): a few seconds, and the base
    // setting stays one group (the runner selects again only between groups, and the base
    // setting's extremes alone, the largest layers, made its estimates 3x too long for the rest);
    // then the base setting, whole-network runs, the other settings.
    const int phase = measurement.other_kernel ? 0 : measurement.whole_network ? 2 : setting == 0 ? 1 : 3;
    return std::tuple(phase, measurement.backend, setting, to_string(measurement.precision), measurement.batch);
  };
  std::stable_sort(measurements.begin(), measurements.end(), [&](const auto& left, const auto& right) {
    return std::tuple(group(left), left.priority) < std::tuple(group(right), right.priority);
  });
}

Expected<MicroPrecision> parse_micro_precision(const std::string& word) {
  const std::size_t colon = word.find(':');
  MicroPrecision parsed;
  parsed.precision = word.substr(0, colon);
  const bool mixed = parsed.precision == "bf16" || parsed.precision == "fp16";
  if (!records::is_precision_name(parsed.precision))
    return bad_input("--precision takes " + records::names_text(records::precision_names()) +
                     " (optionally :" + records::names_text(records::memory_format_names()) + "), not '" + word + "'");
  parsed.memory_format = colon == std::string::npos ? (mixed ? "channels_last" : "contiguous") : word.substr(colon + 1);
  if (!records::is_memory_format_name(parsed.memory_format))
    return bad_input("--precision " + word + ": the memory format after ':' is " +
                     records::names_text(records::memory_format_names()));
  return parsed;
}

std::string to_string(const MicroPrecision& precision) { return precision.precision + ":" + precision.memory_format; }

namespace {

// The precisions a backend runs its passes in: the GPU's the request names, the CPU's fp32 only.
std::vector<MicroPrecision> precisions_of(const std::string& backend, const PlanRequest& request) {
  const workloads::BackendTraits* traits = workloads::find_backend(backend);
  if (traits && traits->device == workloads::Device::cuda && !request.precisions.empty()) return request.precisions;
  return {MicroPrecision{}};
}

}  // namespace

bool first_priority(const PlannedMeasurement& measurement) { return measurement.priority < other_settings_priority; }

Plan make_plan(const PlanRequest& request, const SpeedModel& speed) {
  const auto layers = distinct_layers_of(request.networks, request.extra_layers);
  std::vector<PlannedMeasurement> grid;
  for (const auto& backend : request.backends)
    for (const MicroPrecision& precision : precisions_of(backend, request))
      for (const std::int64_t batch : request.batches) {
        for (std::size_t setting = 0; setting < request.settings.size(); ++setting)
          for (const auto& layer : layers)
            for (const Pass pass : request.passes) {
              if (!has_pass(layer.spec, pass) || (pass != Pass::forward && !layer.backward_used) ||
                  (pass == Pass::backward_data && !layer.backward_data_used))
                continue;
              PlannedMeasurement measurement;
              measurement.backend = backend;
              measurement.descriptor = layer.descriptor;
              measurement.spec = layer.spec;
              measurement.pass = pass;
              measurement.batch = batch;
              measurement.setting = request.settings[setting];
              measurement.precision = precision;
              const int rank = layer.spread_rank;
              measurement.other_kernel =
                  rank < 2 && changes_kernel(layer.spec, backend, batch, request.settings, setting);
              measurement.priority = setting == 0 || measurement.other_kernel
                                         ? rank
                                         : other_settings_priority + (rank < 2 ? rank : rank + 1);
              grid.push_back(std::move(measurement));
            }
        if (!request.whole_network_runs || request.settings.empty()) continue;
        for (const auto& network : request.networks) {
          PlannedMeasurement measurement;
          measurement.backend = backend;
          measurement.whole_network = true;
          measurement.network = network.name;
          measurement.batch = batch;
          measurement.setting = request.settings.front();
          measurement.precision = precision;
          measurement.priority = whole_network_priority;
          grid.push_back(std::move(measurement));
        }
      }
  Plan plan;
  plan.distinct_layers = static_cast<int>(layers.size());
  plan.grid_size = grid.size();
  for (auto& measurement : grid) {
    measurement.estimated_seconds = estimate_seconds(measurement, speed, request.networks);
    measurement.estimated_run_seconds = estimate_run_seconds(measurement, speed, request.networks);
    plan.grid_estimated_seconds += measurement.estimated_seconds;
  }
  plan.measurements =
      select_within_budget(std::move(grid), request.budget_seconds,
                           [](const PlannedMeasurement& measurement) { return measurement.estimated_seconds; });
  plan.sampled = plan.measurements.size() < plan.grid_size;
  order_for_running(plan.measurements, request.settings);
  for (const auto& measurement : plan.measurements) plan.estimated_seconds += measurement.estimated_seconds;
  return plan;
}

std::string describe_plan(const Plan& plan, const PlanRequest& request) {
  std::ostringstream out;
  const auto join = [](const auto& items, const auto& text) {
    std::string joined;
    for (const auto& item : items) joined += (joined.empty() ? "" : ", ") + text(item);
    return joined;
  };
  out << "Plan\n";
  if (!request.networks.empty())
    out << "  networks: " << join(request.networks, [](const auto& network) {
      const auto layers = workloads::distinct_layers(network);
      const auto timed = std::count_if(layers.begin(), layers.end(),
                                       [](const auto& layer) { return has_pass(layer.spec, Pass::forward); });
      return network.name + " (" + std::to_string(timed) + " distinct layers)";
    }) << "\n";
  if (!request.extra_layers.empty())
    out << "  layers given: "
        << join(request.extra_layers, [](const auto& spec) { return workloads::to_descriptor(spec); }) << "\n";
  out << "  distinct layers over all networks: " << plan.distinct_layers
      << " (a layer shared by networks is measured once)\n";
  std::map<std::string, std::set<std::string>> classes;
  for (const auto& measurement : plan.measurements)
    if (!measurement.whole_network) classes[layer_class(measurement.spec)].insert(measurement.descriptor);
  if (!classes.empty())
    out << "  layer classes (distinct layers planned): " << join(classes, [](const auto& entry) {
      return entry.first + " " + std::to_string(entry.second.size());
    }) << "\n";
  out << "  backends: " << join(request.backends, [](const auto& name) { return name; })
      << "; batch per process: " << join(request.batches, [](auto batch) { return std::to_string(batch); }) << "\n";
  if (request.precisions.size() != 1 || !(request.precisions.front() == MicroPrecision{}))
    out << "  GPU precisions: " << join(request.precisions, [](const auto& precision) { return to_string(precision); })
        << " (CPU backends: fp32)\n";
  out << "  settings: " << join(request.settings, [](const auto& setting) { return to_string(setting); })
      << " (the first is the base)\n";
  char line[200];
  std::snprintf(line, sizeof line, "  grid: %zu measurements, about %.0f s; budget %.0f s\n", plan.grid_size,
                plan.grid_estimated_seconds, request.budget_seconds);
  out << line;
  // What each setting keeps: layer passes, classes covered; whole-network runs.
  for (const Setting& setting : request.settings) {
    std::size_t passes = 0;
    std::set<std::string> classes, descriptors;
    for (const auto& measurement : plan.measurements)
      if (!measurement.whole_network && measurement.setting == setting) {
        ++passes;
        classes.insert(layer_class(measurement.spec));
        descriptors.insert(measurement.descriptor);
      }
    std::snprintf(line, sizeof line, "    %-28s %5zu layer passes of %4zu layers, %2zu classes\n",
                  to_string(setting).c_str(), passes, descriptors.size(), classes.size());
    out << line;
  }
  const auto networks = std::count_if(plan.measurements.begin(), plan.measurements.end(),
                                      [](const auto& measurement) { return measurement.whole_network; });
  std::snprintf(line, sizeof line, "    %-28s %5ld\n", "whole-network runs", static_cast<long>(networks));
  out << line;
  std::snprintf(line, sizeof line, "  to measure: %zu measurements, about %.0f s", plan.measurements.size(),
                plan.estimated_seconds);
  // The explanation goes to the stream, not the fixed line: it is longer than the line holds.
  out << line
      << (plan.sampled ? " (sampled to fit the budget: every layer at the base setting first, other settings on the "
                         "largest and smallest layer of each class (first where the framework runs another kernel), "
                         "then spread by size)\n"
                       : " (the whole grid)\n");
  return out.str();
}

}  // namespace dnntune::calibrate
