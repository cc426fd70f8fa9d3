// calibrate/runner.cpp — preparing a calibration: the request checked, the machine probed
// (or read back from DIR/machine.json), the plan made and what DIR already holds taken off it.
// Running it is calibration_run.cpp.
#include "calibrate/runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "common/json_file.hpp"
#include "common/logical_cpus.hpp"
#include "train/precision.hpp"
#include "common/shell_words.hpp"
#include "calibrate/corunning.hpp"
#include "calibrate/layer_backend.hpp"
#include "probe/memory_budget.hpp"
#include "probe/peak_kernels.hpp"
#include "probe/timing.hpp"
#include "probe/topology.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::calibrate {

namespace {

SpeedModel speed_model_of(const records::MachineProfile& profile, std::int64_t last_level_cache_bytes) {
  SpeedModel speed;
  const records::Performance& performance = profile.performance;
  if (performance.peak_fp32_gflops_per_core) speed.peak_gflops_per_core = performance.peak_fp32_gflops_per_core->value;
  double bandwidth = 0;
  for (const records::ScalingPoint& point : performance.triad_scaling) bandwidth = std::max(bandwidth, point.median);
  if (bandwidth > 0) speed.bandwidth_gbs = bandwidth;
  const auto positive = [](const std::optional<records::Figure>& figure) {
    return figure && figure->value > 0 && std::isfinite(figure->value);
  };
  if (positive(performance.first_touch_ns_per_page))
    speed.first_touch_seconds_per_page = speed.first_touch_seconds_per_page_all_cores =
        performance.first_touch_ns_per_page->value * 1e-9;
  if (positive(performance.first_touch_ns_per_page_all_cores))
    speed.first_touch_seconds_per_page_all_cores = performance.first_touch_ns_per_page_all_cores->value * 1e-9;
  speed.last_level_cache_bytes = last_level_cache_bytes;  // what the runner's operand sets span, 0 included
  speed.smt_ways = std::max(1, profile.topology.pus_per_core);
  return speed;
}

// This machine as this process sees it, with the peaks DIR/machine.json holds (measured into it
// when it has none). A machine.json of another machine is refused.
Expected<records::MachineProfile> machine_for(const std::string& directory, bool measure_when_absent,
                                              const std::function<void(const std::string&)>& progress) {
  auto machine = probe::describe_this_machine();
  if (!machine) return machine.error();
  const std::string path = directory + "/machine.json";
  if (std::filesystem::exists(path)) {
    auto saved = records::read_machine_profile(path);
    if (!saved) return saved.error();
    if (records::fingerprint(*saved) != records::fingerprint(*machine))
      return bad_input(path + " describes another machine (fingerprint " + records::fingerprint(*saved) +
                       "; this machine is " + records::fingerprint(*machine) + "): calibrate into another directory");
    if (saved->performance.peak_fp32_gflops_per_core) {
      machine->performance = saved->performance;
      return machine;
    }
  }
  if (!measure_when_absent) return machine;  // a dry run plans with default speeds
  if (progress) progress("measuring this machine's FMA peak and memory bandwidth (dnntune probe) into " + path);
  if (auto measured = probe::measure_node_performance(*machine, probe::PeakOptions{}); !measured)
    return measured.error();
  if (auto written = write_json_file(path, nlohmann::json::parse(records::to_json_text(*machine)), WrittenFile::owned);
      !written)
    return written.error();
  return machine;
}

// Other work on the node skews every figure, multi-threaded kernels most: their threads wait for
// each other at barriers while one of them is descheduled.
void warn_if_busy(const std::function<void(const std::string&)>& progress) {
  const int pus = logical_cpus();
  std::ifstream loadavg("/proc/loadavg");
  double load = 0;
  if (!(loadavg >> load) || !progress || load < 0.5 * pus) return;
  char line[200];
  std::snprintf(line, sizeof line,
                "warning: the load average is %.1f on %d hardware threads: other work is running, and the "
                "measurements will show it",
                load, pus);
  progress(line);
}

Expected<std::vector<std::string>> backends_for(const std::vector<std::string>& requested) {
  const auto available = available_backends();
  if (requested.empty() || std::find(requested.begin(), requested.end(), "all") != requested.end()) return available;
  for (const auto& name : requested)
    if (std::find(available.begin(), available.end(), name) == available.end()) {
      auto made = make_backend(name);  // its error names the available backends
      if (!made) return made.error();
    }
  return requested;
}

// The grid, or exactly the settings asked for: each --processes count (1 if none) with each
// --threads count (if none: the cores split evenly between the processes), SMT as --smt says.
Expected<std::vector<Setting>> settings_for(const CalibrationRequest& request,
                                            const std::vector<std::vector<int>>& cores, int smt_ways) {
  const int core_count = static_cast<int>(cores.size());
  if (request.threads.empty() && request.processes.empty() && !request.smt) return grid_settings(core_count, smt_ways);
  const bool smt = request.smt.value_or(false);
  std::vector<Setting> settings;
  for (const int processes : request.processes.empty() ? std::vector<int>{1} : request.processes) {
    const int even_split = std::max(1, core_count / std::max(1, processes)) * (smt ? smt_ways : 1);
    for (const int threads : request.threads.empty() ? std::vector<int>{even_split} : request.threads) {
      const Setting setting{threads, smt, processes};
      if (auto fits = cpu_sets_for(setting, cores); !fits) return fits.error();
      if (std::find(settings.begin(), settings.end(), setting) == settings.end()) settings.push_back(setting);
    }
  }
  return settings;
}

Expected<void> passes_for(const std::vector<std::string>& words, PlanRequest& plan) {
  if (words.empty()) return {};
  plan.passes.clear();
  plan.whole_network_runs = false;
  for (const auto& word : words) {
    if (word == whole_network_pass) {
      plan.whole_network_runs = true;
      continue;
    }
    const auto pass = std::find_if(std::begin(workloads::all_passes), std::end(workloads::all_passes),
                                   [&](workloads::Pass known) { return workloads::pass_name(known) == word; });
    if (pass == std::end(workloads::all_passes))
      return bad_input("unknown pass '" + word + "' (known: forward, backward_data, backward_weights, " +
                       whole_network_pass + ")");
    plan.passes.push_back(*pass);
  }
  return {};
}

}  // namespace

std::vector<std::vector<int>> usable_cores(const records::MachineProfile& profile) {
  std::vector<std::vector<int>> cores;
  if (!profile.binding) return cores;
  const std::set<int> allowed(profile.binding->allowed_pus.begin(), profile.binding->allowed_pus.end());
  for (const records::Core& core : profile.topology.core_list) {
    std::vector<int> pus;
    for (const int pu : core.pus)
      if (allowed.count(pu)) pus.push_back(pu);
    if (!pus.empty()) cores.push_back(std::move(pus));
  }
  return cores;
}

records::Measurement planned_record(const PlannedMeasurement& measurement, const std::string& fingerprint,
                                    const std::string& allocator) {
  records::Measurement record;
  record.kind = measurement.whole_network ? records::MeasurementKind::network : records::MeasurementKind::layer;
  record.backend = measurement.backend;
  record.machine_fingerprint = fingerprint;
  record.network = measurement.network;
  record.descriptor = measurement.descriptor;
  record.pass = measurement.whole_network ? whole_network_pass : workloads::pass_name(measurement.pass);
  record.batch = measurement.batch;
  record.threads = measurement.setting.threads;
  record.smt = measurement.setting.smt;
  record.processes = measurement.setting.processes;
  record.allocator = allocator;
  record.precision = measurement.precision.precision;
  record.memory_format = measurement.precision.memory_format;
  if (measurement.whole_network) record.network_source = measurement.network;  // as --model took it
  record.command = reproducing_command(measurement, allocator);
  return record;
}

std::vector<std::string> reproducing_argv(const PlannedMeasurement& measurement, const std::string& allocator) {
  std::vector<std::string> argv{"dnntune", "calibrate"};
  if (measurement.whole_network)
    argv.insert(argv.end(), {"--model", measurement.network, "--pass", whole_network_pass});
  else
    argv.insert(argv.end(), {"--layer", measurement.descriptor, "--pass", workloads::pass_name(measurement.pass)});
  argv.insert(argv.end(), {"--backend", measurement.backend, "--batch", std::to_string(measurement.batch), "--threads",
                           std::to_string(measurement.setting.threads), "--processes",
                           std::to_string(measurement.setting.processes)});
  if (measurement.setting.smt) argv.push_back("--smt");
  if (allocator != "default") argv.insert(argv.end(), {"--allocator", allocator});
  if (!(measurement.precision == MicroPrecision{}))
    argv.insert(argv.end(), {"--precision", to_string(measurement.precision)});
  return argv;
}

std::string reproducing_command(const PlannedMeasurement& measurement, const std::string& allocator) {
  return shell_command_line(reproducing_argv(measurement, allocator));
}

// No CPU sold has more than 12 MiB of last-level cache per core (AMD's 3D V-cache parts: 96 MiB
// per 8-core die); a hypervisor reports its host's whole cache (hundreds of MB) to each vCPU.
constexpr std::uint64_t plausible_cache_bytes_per_core = std::uint64_t{16} << 20;

std::int64_t last_level_cache_bytes(const records::MachineProfile& profile, int workers) {
  std::uint64_t bytes = 0;
  const int pus_per_core = std::max(1, profile.topology.pus_per_core);
  for (const records::CacheLevel& cache : profile.topology.caches) {
    if (cache.type == "instruction") continue;
    const std::uint64_t cores_sharing = static_cast<std::uint64_t>(std::max(1, cache.pus_sharing / pus_per_core));
    bytes = std::min(cache.size_bytes, plausible_cache_bytes_per_core * cores_sharing) *
            static_cast<std::uint64_t>(std::max(1, cache.instances));
  }
  return static_cast<std::int64_t>(
      probe::bounded_buffer_bytes(bytes, 0.25 / (2.0 * std::max(1, workers)), 0, std::uint64_t{256} << 20));
}

Expected<PreparedCalibration> prepare_calibration(const CalibrationRequest& request,
                                                  const std::function<void(const std::string&)>& progress) {
  PreparedCalibration calibration;
  calibration.started_at = probe::now_seconds();
  calibration.request = request;
  PlanRequest& plan = calibration.plan_request;
  if (request.models.empty() && request.layers.empty())
    return bad_input("nothing to calibrate: name networks with --model (or layers with --layer)");
  for (const auto& model : request.models) {
    auto network = workloads::load_network(model);
    if (!network) return network.error();
    plan.networks.push_back(std::move(*network));
  }
  for (const auto& descriptor : request.layers) {
    auto spec = workloads::parse_descriptor(descriptor);
    if (!spec) return bad_input("--layer " + descriptor + ": " + spec.error().message);
    plan.extra_layers.push_back(*spec);
  }
  auto backends = backends_for(request.backends);
  if (!backends) return backends.error();
  plan.backends = *backends;
  if (request.batches.empty()) return bad_input("no batch size given");
  for (const std::int64_t batch : request.batches)
    if (batch < 1 || batch > workloads::max_batch)
      return bad_input("batch " + std::to_string(batch) + " out of range (1 to " +
                       std::to_string(workloads::max_batch) + ")");
  plan.batches = request.batches;
  plan.precisions = request.precisions;
  if (plan.precisions.empty())
    plan.precisions = {
        MicroPrecision{train::resolve_precision("auto", true, train::cuda_compute_capability_major(0)), "contiguous"}};
  for (const auto& backend : plan.backends)
    if (const auto* traits = workloads::find_backend(backend); traits && traits->device == workloads::Device::cpu)
      for (const MicroPrecision& precision : request.precisions)  // empty: the GPU's default, fp32 here
        if (!(precision == MicroPrecision{}))
          return bad_input("--precision " + to_string(precision) + ": the " + backend +
                           " backend runs fp32 contiguous only (the GPU's precisions are torch-cuda's)");
  if (auto passes = passes_for(request.passes, plan); !passes) return passes.error();
  if (!(request.budget_seconds > 0)) return bad_input("the budget must be positive (seconds)");

  if (request.budget_cap_seconds > 0 && !(request.budget_cap_seconds >= request.budget_seconds))
    return bad_input("the budget cap must be at least the budget");

  std::error_code error;
  if (!request.dry_run) std::filesystem::create_directories(request.directory, error);
  if (error) return bad_input(request.directory + ": cannot create (" + error.message() + ")");
  const std::string records_path = request.directory + "/layers.jsonl";
  records::MeasurementFile existing;
  if (std::filesystem::exists(records_path)) {
    auto read = records::read_measurements(records_path);
    if (!read) return read.error();
    existing = std::move(*read);
    if (progress)
      for (const auto& skipped : existing.skipped_lines)
        progress("skipped a bad measurement line (measured again if planned): " + skipped);
    if (!request.resume && (!existing.records.empty() || existing.truncated_lines > 0))
      return bad_input(records_path +
                       " already holds measurements: add --resume to continue them, or choose "
                       "another directory with -o");
  }
  warn_if_busy(progress);
  auto machine = machine_for(request.directory, !request.dry_run, progress);
  if (!machine) return machine.error();
  // The probe (slow on a busy machine) never eats the measurements' budget: it starts now.
  calibration.started_at = probe::now_seconds();
  calibration.machine = std::move(*machine);
  calibration.fingerprint = records::fingerprint(calibration.machine);
  for (const records::Measurement& record : existing.records)
    if (record.machine_fingerprint != calibration.fingerprint)
      return bad_input(records_path + " holds measurements of another machine (fingerprint " +
                       record.machine_fingerprint + "; this machine is " + calibration.fingerprint +
                       "): resume only on the machine that made them");
  calibration.usable_cores = usable_cores(calibration.machine);
  if (calibration.usable_cores.empty()) return failure("this process may run on no CPU of the topology");
  calibration.speed =
      speed_model_of(calibration.machine,
                     last_level_cache_bytes(calibration.machine, static_cast<int>(calibration.usable_cores.size())));
  const SpeedModel& speed = calibration.speed;
  auto settings = settings_for(request, calibration.usable_cores, speed.smt_ways);
  if (!settings) return settings.error();
  plan.settings = *settings;
  for (const Setting& setting : request.anchor_settings)  // anchored later: refused now if the node cannot hold them
    if (auto fits = cpu_sets_for(setting, calibration.usable_cores); !fits)
      return bad_input("--anchor-settings " + std::to_string(setting.processes) + "x" +
                       std::to_string(setting.threads) + ": " + fits.error().message);
  // What the numerical checks and worker start-ups will take comes off the budget first.
  const double overhead =
      static_cast<double>(plan.backends.size()) *
      (speed.check_seconds + speed.worker_start_seconds * static_cast<double>(plan.settings.size()));
  if (request.budget_cap_seconds > request.budget_seconds) {
    // Extend the budget, up to the cap, to what the whole grid is expected to take.
    plan.budget_seconds = std::numeric_limits<double>::infinity();
    const double needed = make_plan(plan, speed).grid_estimated_seconds + overhead;
    calibration.request.budget_seconds = std::clamp(needed, request.budget_seconds, request.budget_cap_seconds);
  }
  const double budget = calibration.request.budget_seconds;
  plan.budget_seconds = budget - (probe::now_seconds() - calibration.started_at) - overhead;
  calibration.plan = make_plan(plan, speed);
  plan.budget_seconds = budget;

  std::set<std::string> recorded;
  for (const records::Measurement& record : existing.records)
    if (record.status != records::MeasurementStatus::skipped) recorded.insert(records::measurement_key(record));
  auto& measurements = calibration.plan.measurements;
  const auto before = measurements.size();
  measurements.erase(std::remove_if(measurements.begin(), measurements.end(),
                                    [&](const PlannedMeasurement& measurement) {
                                      return recorded.count(records::measurement_key(planned_record(
                                          measurement, calibration.fingerprint, calibration.request.allocator)));
                                    }),
                     measurements.end());
  calibration.already_recorded = before - measurements.size();
  calibration.plan.estimated_seconds = 0;
  for (const auto& measurement : measurements) calibration.plan.estimated_seconds += measurement.estimated_seconds;
  return calibration;
}

}  // namespace dnntune::calibrate
