// pipeline/first_run.cpp — see first_run.hpp.
#include "pipeline/first_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include "calibrate/plan.hpp"
#include "calibrate/runner.hpp"
#include "model/allocation.hpp"
#include "model/calibration.hpp"
#include "pipeline/first_run_stages.hpp"
#include "pipeline/separating_anchors.hpp"
#include "probe/timing.hpp"
#include "records/measurement.hpp"
#include "train/anchor.hpp"
#include "train/python_runner.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::pipeline {
namespace {

namespace fs = std::filesystem;

// What a first run has measured so far that the plan's estimates start from: the layer records
// (kind layer, ok) and the anchors (DIR/network.jsonl).
struct Measured {
  std::vector<records::Measurement> layers, anchors;
};

Expected<Measured> read_measured(const Entry& entry) {
  Measured measured;
  if (fs::exists(entry.measurements + "/layers.jsonl")) {
    auto layers = records::read_measurements(entry.measurements + "/layers.jsonl");
    if (!layers) return layers.error();
    for (records::Measurement& record : layers->records)
      if (record.kind == records::MeasurementKind::layer && record.status == records::MeasurementStatus::ok)
        measured.layers.push_back(std::move(record));
  }
  auto anchors = train::read_anchor_records(entry.measurements);
  if (!anchors) return anchors.error();
  measured.anchors = std::move(*anchors);
  return measured;
}

// The setting a first run measures first and anchors at (the plan's first).
calibrate::Setting base_setting(const calibrate::PreparedCalibration& prepared) {
  return prepared.plan_request.settings.empty() ? calibrate::Setting{} : prepared.plan_request.settings.front();
}

// One training step of each (network, batch) at the base setting, summed two ways: `step` the
// recorded base anchor where there is one, else `layers`: the sum of the network's layer passes,
// each the recorded median less the faults of outputs each micro-run maps afresh, where it was
// measured, else the plan's estimate of one run (`planned`) (FirstRunEstimates::step_seconds and
// kept_memory_step_seconds; that one glibc-tuned's anchor where it ran).
struct StepSeconds {
  double step = 0;
  double layers = 0;
};

StepSeconds step_seconds(const calibrate::PreparedCalibration& prepared,
                         const std::vector<calibrate::PlannedMeasurement>& planned, const Measured& measured) {
  const calibrate::Setting base = base_setting(prepared);
  const auto key = [](const std::string& descriptor, const std::string& pass, std::int64_t batch) {
    return descriptor + "|" + pass + "|" + std::to_string(batch);
  };
  std::map<std::string, double> pass_seconds;
  for (const calibrate::PlannedMeasurement& measurement : planned)
    if (!measurement.whole_network && measurement.setting == base)
      pass_seconds[key(measurement.descriptor, workloads::pass_name(measurement.pass), measurement.batch)] =
          measurement.estimated_run_seconds;
  for (const records::Measurement& record : measured.layers)
    if (record.threads == base.threads && record.smt == base.smt && record.processes == base.processes &&
        record.allocator == "default") {
      double seconds = record.median_seconds;
      calibrate::PlannedMeasurement pass;
      const auto* named =
          std::find_if(std::begin(workloads::all_passes), std::end(workloads::all_passes),
                       [&](workloads::Pass known) { return workloads::pass_name(known) == record.pass; });
      if (auto spec = workloads::parse_descriptor(record.descriptor);
          spec && named != std::end(workloads::all_passes)) {
        pass.pass = *named;
        pass.spec = *spec;
        pass.batch = record.batch;
        pass.setting = base;
        // Without the faults of outputs each micro-run maps afresh, which a training step does not pay.
        seconds = std::max(seconds - calibrate::estimate_run_fault_seconds(pass, prepared.speed, {}),
                           calibrate::estimate_run_seconds(pass, prepared.speed, {}));
      }
      pass_seconds[key(record.descriptor, record.pass, record.batch)] = seconds;
    }
  StepSeconds total;
  for (const workloads::Network& network : prepared.plan_request.networks)
    for (const std::int64_t batch : prepared.plan_request.batches) {
      double layers = 0;
      for (const workloads::Layer& layer : network.layers) {
        const auto add = [&](workloads::Pass pass) {
          if (const auto found = pass_seconds.find(key(layer.descriptor, workloads::pass_name(pass), batch));
              found != pass_seconds.end())
            layers += found->second;
        };
        add(workloads::Pass::forward);
        if (layer.runs_backward) add(workloads::Pass::backward_weights);
        if (layer.computes_data_gradient) add(workloads::Pass::backward_data);
      }
      const records::Measurement* anchor =
          calibrate::recorded_anchor(measured.anchors, prepared.fingerprint, network.name, batch, base, "default");
      total.step += anchor ? anchor->median_seconds : layers;
      // A step that keeps its memory: glibc-tuned's anchor where it ran (the layers' sum less the
      // faults overstated it by up to half: docs/results.md), which the next variants are priced at.
      const records::Measurement* kept = calibrate::recorded_anchor(
          measured.anchors, prepared.fingerprint, network.name, batch, base, model::reference_allocator);
      total.layers += kept ? kept->median_seconds : layers;
    }
  return total;
}

// The step estimates of a first run's plan from what is measured so far.
void estimate_steps(const calibrate::PreparedCalibration& prepared, const Measured& measured,
                    FirstRunEstimates& estimates) {
  const StepSeconds seconds = step_seconds(prepared, prepared.plan.measurements, measured);
  estimates.step_seconds = seconds.step;
  estimates.kept_memory_step_seconds = seconds.layers;
}

// What the first step of each (network, batch) at the base setting adds faulting in its memory,
// summed as step_seconds sums the steps.
double first_step_fault_seconds(const calibrate::PreparedCalibration& prepared) {
  const calibrate::Setting base = base_setting(prepared);
  double total = 0;
  for (const workloads::Network& network : prepared.plan_request.networks)
    for (const std::int64_t batch : prepared.plan_request.batches)
      total += calibrate::estimate_first_step_fault_seconds(network, batch, base, prepared.speed);
  return total;
}

// How many (network, batch) pairs have no base anchor recorded yet.
int unanchored(const calibrate::PreparedCalibration& prepared, const Measured& measured) {
  const calibrate::Setting base = base_setting(prepared);
  int count = 0;
  for (const workloads::Network& network : prepared.plan_request.networks)
    for (const std::int64_t batch : prepared.plan_request.batches)
      count += calibrate::recorded_anchor(measured.anchors, prepared.fingerprint, network.name, batch, base, "default")
                   ? 0
                   : 1;
  return count;
}

// A calibrate run of `measurements` alone, within `seconds` from now; `already_recorded`: the
// planned passes a resumed entry has (said, so that a user sees the run resumed).
Expected<calibrate::CalibrationSummary> run_micro_runs(const calibrate::PreparedCalibration& prepared,
                                                       std::vector<calibrate::PlannedMeasurement> measurements,
                                                       double seconds, const Progress& progress,
                                                       std::size_t already_recorded = 0) {
  calibrate::PreparedCalibration part = prepared;
  part.plan.measurements = std::move(measurements);
  part.plan.estimated_seconds = 0;
  for (const auto& measurement : part.plan.measurements) part.plan.estimated_seconds += measurement.estimated_seconds;
  part.request.budget_seconds = std::max(0.0, seconds);
  part.started_at = probe::now_seconds();
  char line[240];
  std::snprintf(line, sizeof line, "measuring %zu layer passes%s (about %.0f s, within %.0f s)",
                part.plan.measurements.size(),
                already_recorded ? (", " + std::to_string(already_recorded) + " already recorded").c_str() : "",
                part.plan.estimated_seconds, part.request.budget_seconds);
  progress(line);
  auto summary = calibrate::run_calibration(part, {progress, {}});
  if (!summary) return summary.error();
  std::snprintf(line, sizeof line, "measured in %.0f s: %d ok, %d failed, %d skipped by the budget", summary->seconds,
                summary->ok, summary->failed, summary->skipped);
  progress(line);
  return summary;
}

// A group of micro-runs' worker start (libtorch loaded in each worker), and each backend's
// numerical check: what the plan adds to the micro-runs' own estimates.
constexpr double group_start_seconds = 2;
constexpr double numerical_check_seconds = 3;

double planned_seconds(const std::vector<calibrate::PlannedMeasurement>& measurements) {
  double seconds = 0;
  std::set<std::string> groups;
  for (const auto& measurement : measurements) {
    seconds += measurement.estimated_seconds;
    groups.insert(measurement.backend + " " + calibrate::to_string(measurement.setting) + " " +
                  std::to_string(measurement.batch) + (measurement.other_kernel ? " other" : ""));
  }
  return seconds + group_start_seconds * static_cast<double>(groups.size()) + numerical_check_seconds;
}

// Who trains the anchors that decide the pick (the allocator variants, the separating anchors, the
// close calls): PyTorch from Python where this machine's python3 trains every network asked for
// (the step the job runs: one C++ anchor run moved 23%, more than the layouts differ, and the two
// trainers can order layouts otherwise; docs/results.md), else the C++ trainer. Said either way.
// The base anchor stays the C++ trainer's: its per-module times are the layers' sum's correction,
// which only that trainer times (model/context_correction.hpp).
std::string deciding_runner(const calibrate::PreparedCalibration& prepared, const Progress& progress) {
  const auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  const std::string deciding = "the anchors that decide (allocator variants, separating anchors, close calls)";
  for (const workloads::Network& network : prepared.plan_request.networks)
    if (auto available = train::check_python_runner(network.name); !available) {
      say(deciding + " are trained by the C++ trainer: PyTorch from Python cannot train " + network.name + " here (" +
          available.error().message + ")");
      return records::kCppTrainer;
    }
  say(deciding +
      " are trained by PyTorch from Python, as the job runs; the C++ trainer's base anchor times the layers");
  return records::kPythonTrainer;
}

// The plan's estimates at the start of a first run: `first` and `more` the planned micro-runs of
// priority 1 and the rest, `probe_seconds` what the probe took, `runner` who trains the anchors
// that decide (deciding_runner).
FirstRunEstimates estimates_of(const calibrate::PreparedCalibration& prepared,
                               const std::vector<calibrate::PlannedMeasurement>& first,
                               const std::vector<calibrate::PlannedMeasurement>& more, const Measured& measured,
                               double budget_seconds, double probe_seconds, const std::string& runner) {
  const calibrate::Setting base = base_setting(prepared);
  FirstRunEstimates estimates;
  estimates.budget_seconds = budget_seconds;
  estimates.probe_seconds = probe_seconds;
  estimates.layer_passes = first.size();
  estimates.layer_seconds = first.empty() ? 0 : planned_seconds(first);
  estimates.more_layer_passes = more.size();
  estimates.more_layer_seconds = more.empty() ? 0 : planned_seconds(more);
  estimates.base_setting = std::to_string(base.processes) + "x" + std::to_string(base.threads);
  estimates.anchored = unanchored(prepared, measured);
  estimates.base_anchor_done = estimates.anchored == 0;
  estimate_steps(prepared, measured, estimates);
  estimates.warmup_steps = first_step_warmup_steps(estimates.step_seconds, first_step_fault_seconds(prepared));
  // The variants a resumed entry has anchored at every (network, batch) already: nothing to plan.
  for (const std::string& variant : calibrate::allocator_variants_to_anchor()) {
    bool recorded = true;
    for (const workloads::Network& network : prepared.plan_request.networks)
      for (const std::int64_t batch : prepared.plan_request.batches)
        recorded = recorded && calibrate::recorded_anchor(measured.anchors, prepared.fingerprint, network.name, batch,
                                                          base, variant);
    if (!recorded) estimates.allocators.push_back(variant);
  }
  // With the allocator variants: one more, the rival layout under the allocator the first fit
  // recommends (pipeline/separating_anchors.hpp), the usual pick being glibc-tuned alone.
  if (!estimates.allocators.empty()) ++estimates.separating_anchors;
  estimates.pytorch_setups = estimates.allocators.empty() ? 0 : 2;
  estimates.deciding_by_python = runner == records::kPythonTrainer;
  return estimates;
}

// The plan's measurements split into those of priority 1 (every distinct layer at the base
// setting, the cliff extremes) and the rest, each in the plan's order.
std::pair<std::vector<calibrate::PlannedMeasurement>, std::vector<calibrate::PlannedMeasurement>> split_by_priority(
    const std::vector<calibrate::PlannedMeasurement>& measurements) {
  std::vector<calibrate::PlannedMeasurement> first, more;
  for (const calibrate::PlannedMeasurement& measurement : measurements)
    (calibrate::first_priority(measurement) ? first : more).push_back(measurement);
  return {std::move(first), std::move(more)};
}

// The real work behind the first run's stages (first_run_stages.hpp): micro-runs, trainers and fits
// on the cache entry, each stage's records re-read before the estimates that price the next.
class EntryWork final : public FirstRunWork {
 public:
  EntryWork(const Entry& entry, const DefaultCalibrationRequest& request, Coverage& coverage,
            calibrate::PreparedCalibration prepared, std::string executable)
      : entry_(entry), request_(request), coverage_(coverage), prepared_(std::move(prepared)) {
    std::tie(first_, more_) = split_by_priority(prepared_.plan.measurements);
    separate_.models = request.models;
    separate_.batches = request.batches;
    separate_.directory = entry.measurements;
    separate_.executable = std::move(executable);
    separate_.progress = request.progress;
    separate_.runner = deciding_runner(prepared_, request.progress);
    prepared_.request.allocator_anchor_runner = separate_.runner;
  }

  Expected<FirstRunEstimates> estimates(double budget_seconds, double probe_seconds) override {
    auto measured = read_measured(entry_);
    if (!measured) return measured.error();
    FirstRunEstimates estimates =
        estimates_of(prepared_, first_, more_, *measured, budget_seconds, probe_seconds, separate_.runner);
    // Settled once, at the plan that is announced: a replan never changes the trainer mid-run.
    if (!runner_settled_ && estimates.deciding_by_python && !python_keeps_the_variants(estimates)) {
      request_.progress(
          "PyTorch's runs of the allocator variants do not fit this first run beside its steps (Python's start "
          "and a run of glibc's defaults each): the C++ trainer trains the anchors that decide");
      separate_.runner = records::kCppTrainer;
      prepared_.request.allocator_anchor_runner = records::kCppTrainer;
      estimates.deciding_by_python = false;
    }
    runner_settled_ = true;
    return estimates;
  }
  Expected<void> estimate_steps(FirstRunEstimates& estimates) override {
    auto measured = read_measured(entry_);
    if (!measured) return measured.error();
    pipeline::estimate_steps(prepared_, *measured, estimates);
    return {};
  }
  double first_step_fault_seconds() override { return pipeline::first_step_fault_seconds(prepared_); }
  int pairs() override {
    return static_cast<int>(prepared_.plan_request.networks.size() * prepared_.plan_request.batches.size());
  }
  Expected<bool> layer_passes(double seconds) override {
    auto summary = run_micro_runs(prepared_, first_, seconds, request_.progress, prepared_.already_recorded);
    if (!summary) return summary.error();
    auto measured = read_measured(entry_);
    if (!measured) return measured.error();
    return !measured->layers.empty();
  }
  Expected<BaseAnchorRun> base_anchor(double time_limit_seconds) override {
    prepared_.request.anchor_time_limit_seconds = time_limit_seconds;
    auto anchors = calibrate::run_anchors(prepared_, request_.progress, calibrate::AnchorKinds::default_allocator);
    if (!anchors) return anchors.error();
    auto measured = read_measured(entry_);
    if (!measured) return measured.error();
    // Its timed steps: as many as its time limit let it run (the first pair's record says).
    const auto& plan = prepared_.plan_request;
    const records::Measurement* first =
        plan.networks.empty() || plan.batches.empty()
            ? nullptr
            : calibrate::recorded_anchor(measured->anchors, prepared_.fingerprint, plan.networks.front().name,
                                         plan.batches.front(), base_setting(prepared_), "default");
    return BaseAnchorRun{*anchors, first ? first->repetitions : prepared_.request.anchor_iterations};
  }
  Expected<int> allocator_anchors(const std::vector<std::string>& variants, int timed_steps, double seconds) override {
    prepared_.request.allocator_variants = variants;
    prepared_.request.allocator_anchor_iterations = timed_steps;
    prepared_.request.allocator_anchor_budget_seconds = seconds;
    return calibrate::run_anchors(prepared_, request_.progress, calibrate::AnchorKinds::other_allocators);
  }
  Expected<FirstRunFit> fit(bool last) override {
    auto fitted = fit_entry(entry_, request_, coverage_, last);
    if (!fitted) return fitted.error();
    FirstRunFit fit{*fitted, nullptr};
    if (fitted->calibration_path.empty()) return fit;
    auto calibration = model::read_calibration(fitted->calibration_path);
    if (!calibration) return calibration.error();
    fit.calibration = std::make_shared<const model::Calibration>(std::move(*calibration));
    return fit;
  }
  Expected<void> keep_coverage() override { return write_coverage(entry_.coverage, coverage_); }
  Expected<int> separating_anchors(const FirstRunFit& fit, const AnchorShare& share) override {
    return run_separating_anchors(*fit.calibration, request_for(share));
  }
  Expected<int> setup_check(const FirstRunFit& fit, const AnchorShare& share) override {
    return run_setup_check(*fit.calibration, request_for(share));
  }
  Expected<int> close_call(const FirstRunFit& fit, const AnchorShare& share) override {
    return run_close_call_anchor(*fit.calibration, request_for(share));
  }
  Expected<int> more_layer_passes(double seconds) override {
    auto summary = run_micro_runs(prepared_, more_, seconds, request_.progress);
    if (!summary) return summary.error();
    return summary->ok;
  }
  Expected<int> repeated_base_anchors(double seconds) override {
    return calibrate::run_repeated_base_anchors(prepared_, request_.progress, seconds);
  }

 private:
  SeparatingAnchorRequest request_for(const AnchorShare& share) const {
    SeparatingAnchorRequest request = separate_;
    request.budget_seconds = share.seconds;
    request.first_budget_seconds = share.first_seconds;
    request.warmup_steps = share.warmup_steps;
    return request;
  }

  const Entry& entry_;
  const DefaultCalibrationRequest& request_;
  Coverage& coverage_;
  calibrate::PreparedCalibration prepared_;
  std::vector<calibrate::PlannedMeasurement> first_, more_;  // the micro-runs of priority 1, and the rest
  SeparatingAnchorRequest separate_;
  bool runner_settled_ = false;  // who trains the anchors that decide, settled at the first plan
};

}  // namespace

Expected<FirstRunEstimates> first_run_estimates(const Entry& entry, const calibrate::PreparedCalibration& prepared,
                                                double budget_seconds, double probe_seconds) {
  const auto [first, more] = split_by_priority(prepared.plan.measurements);
  auto measured = read_measured(entry);
  if (!measured) return measured.error();
  return estimates_of(prepared, first, more, *measured, budget_seconds, probe_seconds, deciding_runner(prepared, {}));
}

Expected<DefaultCalibration> first_run(const Entry& entry, const DefaultCalibrationRequest& request,
                                       const Coverage& wanted, Coverage& coverage,
                                       std::chrono::steady_clock::time_point started) {
  auto prepared = prepare_entry(entry, request, coverage);
  if (!prepared) return prepared.error();
  for (const auto& item : wanted)
    if (std::find(coverage.begin(), coverage.end(), item) == coverage.end()) coverage.push_back(item);
  auto executable = worker_executable(request);
  if (!executable) return executable.error();
  EntryWork work(entry, request, coverage, std::move(*prepared), std::move(*executable));
  const FirstRunClock clock = [started] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  return run_first_run(work, request.first_run_seconds, clock, request.progress);
}

}  // namespace dnntune::pipeline
