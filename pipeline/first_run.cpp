// pipeline/first_run.cpp — see first_run.hpp.
#include "pipeline/first_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "calibrate/plan.hpp"
#include "calibrate/runner.hpp"
#include "model/allocation.hpp"
#include "model/calibration.hpp"
#include "pipeline/separating_anchors.hpp"
#include "probe/timing.hpp"
#include "records/measurement.hpp"
#include "train/anchor.hpp"
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
      const auto* named = std::find_if(std::begin(workloads::all_passes), std::end(workloads::all_passes),
                                       [&](workloads::Pass known) { return workloads::pass_name(known) == record.pass; });
      if (auto spec = workloads::parse_descriptor(record.descriptor); spec && named != std::end(workloads::all_passes)) {
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
      const records::Measurement* kept = calibrate::recorded_anchor(measured.anchors, prepared.fingerprint,
                                                                    network.name, batch, base,
                                                                    model::reference_allocator);
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
  std::snprintf(line, sizeof line, "measured in %.0f s: %d ok, %d failed, %d skipped by the budget",
                summary->seconds, summary->ok, summary->failed, summary->skipped);
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

// The plan's estimates at the start of a first run: `first` and `more` the planned micro-runs of
// priority 1 and the rest, `probe_seconds` what the probe took.
FirstRunEstimates estimates_of(const calibrate::PreparedCalibration& prepared,
                               const std::vector<calibrate::PlannedMeasurement>& first,
                               const std::vector<calibrate::PlannedMeasurement>& more, const Measured& measured,
                               double budget_seconds, double probe_seconds) {
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

}  // namespace

Expected<FirstRunEstimates> first_run_estimates(const Entry& entry, const calibrate::PreparedCalibration& prepared,
                                                double budget_seconds, double probe_seconds) {
  const auto [first, more] = split_by_priority(prepared.plan.measurements);
  auto measured = read_measured(entry);
  if (!measured) return measured.error();
  return estimates_of(prepared, first, more, *measured, budget_seconds, probe_seconds);
}

Expected<DefaultCalibration> first_run(const Entry& entry, const DefaultCalibrationRequest& request,
                                       const Coverage& wanted, Coverage& coverage,
                                       std::chrono::steady_clock::time_point started) {
  const Progress& progress = request.progress;
  const auto left = [&] {
    return request.first_run_seconds -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  auto prepared = prepare_entry(entry, request, coverage);
  if (!prepared) return prepared.error();
  for (const auto& item : wanted)
    if (std::find(coverage.begin(), coverage.end(), item) == coverage.end()) coverage.push_back(item);
  const auto [first, more] = split_by_priority(prepared->plan.measurements);
  auto measured = read_measured(entry);
  if (!measured) return measured.error();
  FirstRunEstimates estimates =
      estimates_of(*prepared, first, more, *measured, request.first_run_seconds, request.first_run_seconds - left());
  const FirstRunPlan announced = plan_first_run(estimates);
  progress(describe_first_run(announced));

  // The layer passes of priority 1: planned at their estimate, stopped only where they would eat
  // into the anchors' shares (small layers' estimates leave out the workers' dispatch, and what
  // they do not use goes to the later stages anyway).
  const double anchors_share = announced.seconds(FirstRunStage::base_anchor) +
                               announced.seconds(FirstRunStage::allocators) +
                               announced.seconds(FirstRunStage::separating_anchors) +
                               announced.seconds(FirstRunStage::pytorch_setups);
  auto summary = run_micro_runs(*prepared, first,
                                std::max(announced.seconds(FirstRunStage::layer_passes), left() - anchors_share),
                                progress, prepared->already_recorded);
  if (!summary) return summary.error();
  measured = read_measured(entry);
  if (!measured) return measured.error();
  if (measured->layers.empty()) return fit_entry(entry, request, coverage);  // nothing for an anchor to correct

  // Each later stage is replanned within what is left, the stages before it done.
  estimates.probe_seconds = 0;
  estimates.layer_passes = 0;
  estimates.layer_seconds = 0;
  const double first_step_faults = first_step_fault_seconds(*prepared);
  const auto replan = [&] {
    estimates.budget_seconds = std::max(0.0, left());
    estimate_steps(*prepared, *measured, estimates);
    if (!estimates.base_anchor_done)
      estimates.warmup_steps = first_step_warmup_steps(estimates.step_seconds, first_step_faults);
    return plan_first_run(estimates);
  };
  // The base anchor, glibc's default allocator: every later stage rests on it
  // (announced_stage_stays; docs/results.md, "First-touch in the plan").
  FirstRunPlan plan = replan();
  if (!estimates.base_anchor_done) {
    const double base_estimate =
        base_anchor_seconds(estimates.step_seconds, estimates.anchored, estimates.warmup_steps, 1);
    if (plan.count(FirstRunStage::base_anchor) == 0 &&
        !announced_stage_stays(announced, FirstRunStage::base_anchor, base_estimate, left())) {
      progress("anchor at " + estimates.base_setting + " not trained: about " +
               std::to_string(std::lround(base_estimate)) + " s, past the " +
               std::to_string(std::lround(std::max(0.0, left()))) + " s left of the first run");
      return fit_entry(entry, request, coverage);
    }
    // Its timed steps stop where glibc-tuned's announced share begins (one timed step at least),
    // else where the whole first run's time ends: a step or two fewer here is what lets the
    // allocator be measured at all when the layer passes or this warm-up ran long.
    const double reference_share =
        announced.allocators.empty()
            ? 0
            : allocator_anchor_seconds(estimates.kept_memory_step(), std::max(1, estimates.anchored),
                                       estimates.warmup_steps);
    prepared->request.anchor_time_limit_seconds = std::max(1.0, left() - reference_share);
    const auto anchor_started = std::chrono::steady_clock::now();
    auto anchors = calibrate::run_anchors(*prepared, progress, calibrate::AnchorKinds::default_allocator);
    if (!anchors) return anchors.error();
    const double anchor_wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - anchor_started).count();
    measured = read_measured(entry);
    if (!measured) return measured.error();
    // Its wall time beside its measured steps says what a warm-up costs here: the later anchors'
    // estimates use it, so that the first run keeps to what it announced. Its timed steps: as many
    // as its time limit let it run (the first pair's record says).
    const calibrate::Setting base = base_setting(*prepared);
    const records::Measurement* first_anchor =
        prepared->plan_request.networks.empty() || prepared->plan_request.batches.empty()
            ? nullptr
            : calibrate::recorded_anchor(measured->anchors, prepared->fingerprint,
                                         prepared->plan_request.networks.front().name,
                                         prepared->plan_request.batches.front(), base, "default");
    if (*anchors > 0)
      estimates.warmup_steps =
          measured_warmup_steps(anchor_wall, step_seconds(*prepared, prepared->plan.measurements, *measured).step,
                                estimates.anchored,
                                first_anchor ? first_anchor->repetitions : prepared->request.anchor_iterations);
    estimates.anchored = 0;
    estimates.base_anchor_done = true;
  }

  // The allocator variants at the base setting, from the base anchor's measured step; glibc-tuned,
  // announced, without which the allocator is never chosen (announced_stage_stays: a loaded
  // machine's slow layer passes and base anchor dropped it twice). Each variant times as many
  // steps as its step (what glibc keeping its memory runs, of one network at one batch) affords.
  estimate_steps(*prepared, *measured, estimates);
  const double pairs = static_cast<double>(std::max<std::size_t>(
      1, prepared->plan_request.networks.size() * prepared->plan_request.batches.size()));
  const double kept_memory_step = estimates.kept_memory_step();
  estimates.allocator_timed_steps = allocator_timed_steps(kept_memory_step / pairs);
  prepared->request.allocator_anchor_iterations = estimates.allocator_timed_steps;
  plan = replan();
  if (plan.allocators.empty() &&
      announced_stage_stays(announced, FirstRunStage::allocators,
                            allocator_anchor_seconds(kept_memory_step, std::max(1, estimates.anchored),
                                                     estimates.warmup_steps, estimates.allocator_timed_steps),
                            left())) {
    plan.allocators = {announced.allocators.front()};
    plan.stages.push_back({FirstRunStage::allocators, 1, left()});
    progress("the " + plan.allocators.front() + " anchor is trained with the " +
             std::to_string(std::lround(left())) + " s left: without it the allocator cannot be chosen");
  }
  prepared->request.allocator_variants = plan.allocators;
  prepared->request.allocator_anchor_budget_seconds = plan.seconds(FirstRunStage::allocators);
  int trained = 0;
  if (!plan.allocators.empty()) {
    auto allocators = calibrate::run_anchors(*prepared, progress, calibrate::AnchorKinds::other_allocators);
    if (!allocators) return allocators.error();
    trained += *allocators;
  } else {
    progress("allocator anchors not trained: not one fits the " + std::to_string(std::lround(std::max(0.0, left()))) +
             " s left of the first run; the allocator stays glibc's default, never an unmeasured variant");
  }
  measured = read_measured(entry);  // the later stages are priced at glibc-tuned's measured step
  if (!measured) return measured.error();
  std::vector<std::string> variants_left_out;
  for (const std::string& variant : estimates.allocators)
    if (std::find(plan.allocators.begin(), plan.allocators.end(), variant) == plan.allocators.end())
      variants_left_out.push_back(variant);
  estimates.allocators.clear();

  // The first fit, then the settings whose bands overlap the top one's, the closest call first.
  auto first_fit = fit_entry(entry, request, coverage, false);
  if (!first_fit) return first_fit.error();
  if (first_fit->calibration_path.empty()) return first_fit;  // nothing measured: nothing cached either
  auto calibration = model::read_calibration(first_fit->calibration_path);
  if (!calibration) return calibration.error();
  auto executable = worker_executable(request);
  if (!executable) return executable.error();
  plan = replan();
  SeparatingAnchorRequest separate;
  separate.models = request.models;
  separate.batches = request.batches;
  separate.directory = entry.measurements;
  separate.executable = *executable;
  separate.progress = progress;
  separate.budget_seconds = plan.seconds(FirstRunStage::separating_anchors);
  separate.warmup_steps = estimates.warmup_steps;
  // The closest call is what decides the pick: kept by the plan, it may take what is left of the
  // whole first run when its own estimate (from the model's ratio to the base anchor) is longer.
  if (plan.count(FirstRunStage::separating_anchors) > 0) separate.first_budget_seconds = std::max(0.0, left());
  auto separating = run_separating_anchors(*calibration, separate);
  if (!separating) return separating.error();
  trained += *separating;
  separate.first_budget_seconds = 0;  // the closest call's allowance, taken
  estimates.separating_anchors = 0;

  // The answer's setups timed by PyTorch, before the extra layer passes: they can change the pick.
  // Announced, the pair may take what is left of the whole first run when the replan's estimate no
  // longer fits (its own check starts it only when both runs fit).
  plan = replan();
  if (plan.count(FirstRunStage::pytorch_setups) > 0 || announced.count(FirstRunStage::pytorch_setups) > 0) {
    auto current = *separating > 0 ? fit_entry(entry, request, coverage, false) : first_fit;
    if (!current) return current.error();
    auto answered = model::read_calibration(current->calibration_path);
    if (!answered) return answered.error();
    const double share =
        plan.count(FirstRunStage::pytorch_setups) > 0 ? plan.seconds(FirstRunStage::pytorch_setups) : left();
    const auto started = std::chrono::steady_clock::now();
    for (;;) {
      separate.budget_seconds =
          std::min(share - std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), left());
      if (!(separate.budget_seconds > 0)) break;
      auto timed = run_setup_check(*answered, separate);
      if (!timed) return timed.error();
      if (*timed == 0) break;
      trained += *timed;
    }
  }
  estimates.pytorch_setups = 0;

  // The first variant the allocator stage left out, where a later stage overran less than planned
  // or was dropped: a variant can change the pick, an extra layer pass only refines the layers' sum.
  // One: a variant's own steps can be several times glibc's (jemalloc on a VM), past what is left.
  // Priced at the kept step the replans since the allocator stage took from glibc-tuned's anchor.
  if (!variants_left_out.empty() &&
      left() >= allocator_anchor_seconds(estimates.kept_memory_step(), 1, estimates.warmup_steps,
                                         estimates.allocator_timed_steps)) {
    prepared->request.allocator_variants = {variants_left_out.front()};
    prepared->request.allocator_anchor_budget_seconds = std::max(0.0, left());
    auto late = calibrate::run_anchors(*prepared, progress, calibrate::AnchorKinds::other_allocators);
    if (!late) return late.error();
    trained += *late;
  }

  // The separating anchors their stage left out (a rival layout under the allocator the answer
  // sets, the one-thread setting), where what came after it left the time: a real step of a rival
  // layout can change the pick, an extra layer pass only refines the layers' sum (docs/results.md,
  // "The first answer": a rival layout under glibc-tuned left out by seconds while its time went
  // to extra layer passes, and the answer's layout was the slower one).
  if (left() > 0) {
    separate.budget_seconds = std::max(0.0, left());
    auto late_separating = run_separating_anchors(*calibration, separate);
    if (!late_separating) return late_separating.error();
    trained += *late_separating;
  }

  // The other layer passes, with what is left.
  plan = replan();
  if (!more.empty()) {
    if (plan.count(FirstRunStage::more_layer_passes) > 0) {
      auto extra = run_micro_runs(*prepared, more, std::max(0.0, left()), progress);
      if (!extra) return extra.error();
      trained += extra->ok;
    } else {
      progress(std::to_string(more.size()) + " more layer passes not measured: no time left of the first run "
               "(a larger --calibration-budget measures them; a later run resumes them)");
    }
  }
  DefaultCalibration result = *first_fit;
  if (trained == 0) {
    if (auto written = write_coverage(entry.coverage, coverage); !written) return written.error();
  } else {
    progress("refitting with " + std::to_string(trained) + " more measurement" + (trained == 1 ? "" : "s"));
    auto refit = fit_entry(entry, request, coverage);
    if (!refit) return refit.error();
    result = *refit;
  }
  // With what is still left: the base anchor again (C++, Python), then the close calls the
  // anchors' runs cannot settle, each refitted after. The entry is complete already: an
  // interrupted run loses nothing but this refinement.
  auto repeated = calibrate::run_repeated_base_anchors(*prepared, progress, std::max(0.0, left()));
  if (!repeated) return repeated.error();
  if (*repeated > 0) {
    progress("refitting with " + std::to_string(*repeated) + " more anchor" + (*repeated == 1 ? "" : "s"));
    auto refit = fit_entry(entry, request, coverage);
    if (!refit) return refit.error();
    result = *refit;
  }
  // The close calls, within their share: first the answer's, timed by PyTorch as the job runs it
  // (layout and allocator together: what the C++ trainer cannot settle), then those the anchors'
  // runs leave open.
  const auto settling_started = std::chrono::steady_clock::now();
  for (const auto settle : {run_setup_check, run_close_call_anchor}) {
    for (;;) {
      const double spent =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - settling_started).count();
      separate.budget_seconds =
          std::clamp(close_call_share * request.first_run_seconds - spent, 0.0, std::max(0.0, left()));
      if (!(separate.budget_seconds > 0)) break;
      auto current = model::read_calibration(result.calibration_path);
      if (!current) return current.error();
      auto settled = settle(*current, separate);
      if (!settled) return settled.error();
      if (*settled == 0) break;
      auto refit = fit_entry(entry, request, coverage);
      if (!refit) return refit.error();
      result = *refit;
    }
  }
  return result;
}

}  // namespace dnntune::pipeline
