// pipeline/default_calibration.cpp — see default_calibration.hpp.
#include "pipeline/default_calibration.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <utility>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "pipeline/first_run_plan.hpp"
#include "pipeline/measurement_inputs.hpp"
#include "pipeline/separating_anchors.hpp"
#include "pipeline/version.hpp"
#include "common/file_lock.hpp"
#include "common/json_file.hpp"
#include "common/self_executable.hpp"
#include "model/calibration.hpp"
#include "model/fit.hpp"
#include "calibrate/layer_backend.hpp"
#include "calibrate/runner.hpp"
#include "probe/timing.hpp"
#include "probe/topology.hpp"
#include "records/measurement.hpp"
#include "train/anchor.hpp"
#include "workloads/network_at_batch.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::pipeline {
namespace {

namespace fs = std::filesystem;

using Coverage = std::vector<workloads::NetworkAtBatch>;

std::string file_safe(std::string text) {
  for (char& character : text)
    if (!std::isalnum(static_cast<unsigned char>(character)) && character != '.' && character != '-') character = '_';
  return text;
}

// A cache entry: where its files are.
struct Entry {
  std::string directory, measurements, machine, calibration, coverage, lock;
  explicit Entry(const std::string& path)
      : directory(path), measurements(path + "/measurements"), machine(measurements + "/machine.json"),
        calibration(path + "/calibration.json"), coverage(path + "/covered.json"), lock(path + ".lock") {}
};

// covered.json: "resnet152@32" for each (network, batch) the measurements were planned for; a
// network file is named by its path (if its content changes, its new layers are measured). An
// entry that does not parse is dropped (and so measured again), never fatal.
Coverage read_coverage(const std::string& path) {
  Coverage coverage;
  const auto document = read_json_file(path);
  if (!document || !document->is_object() || !document->contains("covered") || !document->at("covered").is_array())
    return coverage;
  for (const auto& item : document->at("covered")) {
    if (!item.is_string()) continue;
    if (auto covered = workloads::NetworkAtBatch::from_text(item.get<std::string>())) coverage.push_back(*covered);
  }
  return coverage;
}

Expected<void> write_coverage(const std::string& path, const Coverage& coverage) {
  std::vector<std::string> items;
  for (const auto& covered : coverage) items.push_back(covered.to_text());
  return write_json_file(path, {{"covered", items}}, WrittenFile::owned);
}

Coverage wanted_by(const DefaultCalibrationRequest& request) {
  Coverage wanted;
  for (const auto& model : request.models)
    for (const std::int64_t batch : request.batches) wanted.push_back({model, batch});
  return wanted;
}

bool covers(const Coverage& coverage, const Coverage& wanted) {
  return std::all_of(wanted.begin(), wanted.end(), [&](const auto& item) {
    return std::find(coverage.begin(), coverage.end(), item) != coverage.end();
  });
}

// The request checked in full before anything in the cache is touched: a bad batch or network
// must never reach the code that rebuilds entries.
Expected<void> check_request(const DefaultCalibrationRequest& request) {
  if (request.models.empty()) return bad_input("no network to calibrate");
  for (const auto& model : request.models)
    if (auto network = workloads::load_network(model); !network) return network.error();
  if (request.batches.empty()) return bad_input("no batch size given");
  for (const std::int64_t batch : request.batches)
    if (batch < 1 || batch > workloads::max_batch)
      return bad_input("batch " + std::to_string(batch) + " out of range (1 to " + std::to_string(workloads::max_batch) +
                       ")");
  if (!(request.first_run_seconds > 0) || !std::isfinite(request.first_run_seconds))
    return bad_input("the first run's budget must be a positive number of seconds");
  return {};
}

// Moves an unusable measurement directory aside, kept for inspection, so the entry is rebuilt.
Expected<void> move_aside(const std::string& directory, const std::string& why, const Progress& progress) {
  if (!fs::exists(directory)) return {};
  const auto stamp = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string kept = directory + ".unusable-" + std::to_string(stamp);
  std::error_code error;
  fs::rename(directory, kept, error);
  if (error) return failure(directory + ": cannot move it aside (" + error.message() + ")");
  progress(why + ": kept as " + kept + ", measuring anew");
  return {};
}

Expected<std::string> worker_executable(const DefaultCalibrationRequest& request) {
  if (!request.executable.empty()) return request.executable;
  return self_executable_path();
}

// The entry's folder name: this machine's fingerprint, the backend and its version, dnntune's.
Expected<std::string> entry_directory(const records::MachineProfile& machine, const std::string& backend_name) {
  auto backend = calibrate::make_backend(backend_name);
  if (!backend) return backend.error();
  return cache_directory() + "/" + records::fingerprint(machine) + "-" + backend_name + "-" +
         file_safe((*backend)->version()) + "-dnntune" + DNNTUNE_VERSION;
}

// The probe (once per machine) and the plan of the micro-runs within the whole first run, on the
// entry's measurements (resumed); `coverage` is emptied when those had to be moved aside.
Expected<calibrate::PreparedCalibration> prepare(const Entry& entry, const DefaultCalibrationRequest& request,
                                                 Coverage& coverage) {
  const Progress& progress = request.progress;
  calibrate::CalibrationRequest calibrate;
  calibrate.models = request.models;
  calibrate.batches = request.batches;
  calibrate.backends = {request.backend};
  // The whole grid that could fit in the first run: the first run's plan shares the time out.
  calibrate.budget_seconds = request.first_run_seconds;
  // A first run's anchor: one untimed step (the one that faults every activation in), then
  // three timed ones under glibc's default malloc, which is still settling on its second step
  // (its mmap threshold moves and big activations are mmapped and faulted in anew): a median of
  // three drops that step. Under the other allocators two untimed steps and one timed: the first
  // optimizer step creates the momentum buffers, so the second step's activations no longer fit
  // the first one's freed memory and are faulted in anew (glibc-tuned's second step of resnet18 b8
  // ran 1.3x its third, and one timed second step put glibc-tuned's gain at 1.04x where PyTorch
  // measured 1.58x: docs/results.md); from the third step on they repeat, and one step each is
  // what lets every variant be measured within a first run.
  calibrate.anchor_warmup = 1;
  calibrate.anchor_iterations = 3;
  calibrate.allocator_anchor_warmup = 2;
  calibrate.allocator_anchor_iterations = 1;
  calibrate.directory = entry.measurements;
  calibrate.resume = fs::exists(entry.measurements + "/layers.jsonl");
  auto executable = worker_executable(request);
  if (!executable) return executable.error();
  calibrate.executable = *executable;
  auto prepared = calibrate::prepare_calibration(calibrate, progress);
  if (!prepared && calibrate.resume) {
    // The request was checked: what failed is the directory (corrupt, or another machine's).
    if (auto moved = move_aside(entry.measurements, "the cached measurements cannot be resumed (" +
                                                        prepared.error().message + ")", progress);
        !moved)
      return moved.error();
    coverage.clear();
    calibrate.resume = false;
    prepared = calibrate::prepare_calibration(calibrate, progress);
  }
  return prepared;
}

// Fits the entry's measurements; an empty calibration path when no layer was measured. Only the
// last fit of a run writes the coverage that marks the entry done.
Expected<DefaultCalibration> fit(const Entry& entry, const DefaultCalibrationRequest& request,
                                 const Coverage& coverage, bool last = true) {
  const Progress& progress = request.progress;
  DefaultCalibration result;
  result.machine_path = entry.machine;
  auto inputs = read_measurement_inputs({entry.measurements});
  if (inputs)
    for (const auto& line : skipped_lines_report(inputs->skipped_lines)) progress(line);
  const bool measured = inputs && std::any_of(inputs->records.begin(), inputs->records.end(), [](const auto& record) {
                          return record.kind == records::MeasurementKind::layer &&
                                 record.status == records::MeasurementStatus::ok;
                        });
  if (!measured) {
    result.note = "no layer could be measured within the budget, so this answer is the model's alone (the built-in " +
                  request.backend + " reference calibration on this machine's probed peaks); the next run measures again";
    return result;
  }
  progress("fitting the cost model to the measurements");
  auto profile = records::read_machine_profile(result.machine_path);
  if (!profile) return profile.error();
  auto calibration =
      model::fit_calibration(inputs->records, *profile, request.backend, inputs->files, model::FitOptions{});
  if (!calibration) return calibration.error();
  if (auto written = write_json_file(entry.calibration, nlohmann::json::parse(model::to_json_text(*calibration)),
                                     WrittenFile::owned);
      !written)
    return written.error();
  if (last)
    if (auto written = write_coverage(entry.coverage, coverage); !written) return written.error();
  result.calibration_path = entry.calibration;
  return result;
}

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
// kept_memory_step_seconds).
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
      total.layers += layers;
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

// The first run after the lock and the announcement, its stages in the plan's order
// (first_run_plan.hpp), each replanned with what was measured before it.
Expected<DefaultCalibration> first_run(const Entry& entry, const DefaultCalibrationRequest& request,
                                       const Coverage& wanted, Coverage& coverage,
                                       std::chrono::steady_clock::time_point started) {
  const Progress& progress = request.progress;
  const auto left = [&] {
    return request.first_run_seconds -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  auto prepared = prepare(entry, request, coverage);
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
  if (measured->layers.empty()) return fit(entry, request, coverage);  // nothing for an anchor to correct

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
        base_anchor_seconds(estimates.step_seconds, estimates.anchored, estimates.warmup_steps);
    if (plan.count(FirstRunStage::base_anchor) == 0 &&
        !announced_stage_stays(announced, FirstRunStage::base_anchor, base_estimate, left())) {
      progress("anchor at " + estimates.base_setting + " not trained: about " +
               std::to_string(std::lround(base_estimate)) + " s, past the " +
               std::to_string(std::lround(std::max(0.0, left()))) + " s left of the first run");
      return fit(entry, request, coverage);
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
  std::vector<std::string> variants_left_out;
  for (const std::string& variant : estimates.allocators)
    if (std::find(plan.allocators.begin(), plan.allocators.end(), variant) == plan.allocators.end())
      variants_left_out.push_back(variant);
  estimates.allocators.clear();

  // The first fit, then the settings whose bands overlap the top one's, the closest call first.
  auto first_fit = fit(entry, request, coverage, false);
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
  estimates.separating_anchors = 0;

  // The answer's setups timed by PyTorch, before the extra layer passes: they can change the pick.
  // Announced, the pair may take what is left of the whole first run when the replan's estimate no
  // longer fits (its own check starts it only when both runs fit).
  plan = replan();
  if (plan.count(FirstRunStage::pytorch_setups) > 0 || announced.count(FirstRunStage::pytorch_setups) > 0) {
    auto current = *separating > 0 ? fit(entry, request, coverage, false) : first_fit;
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
  if (!variants_left_out.empty() &&
      left() >= allocator_anchor_seconds(kept_memory_step, 1, estimates.warmup_steps, estimates.allocator_timed_steps)) {
    prepared->request.allocator_variants = {variants_left_out.front()};
    prepared->request.allocator_anchor_budget_seconds = std::max(0.0, left());
    auto late = calibrate::run_anchors(*prepared, progress, calibrate::AnchorKinds::other_allocators);
    if (!late) return late.error();
    trained += *late;
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
    auto refit = fit(entry, request, coverage);
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
    auto refit = fit(entry, request, coverage);
    if (!refit) return refit.error();
    result = *refit;
  }
  // The close calls, within their share: first the answer's, timed by PyTorch as the job runs it
  // (layout and allocator together: what the C++ trainer cannot settle), then those the anchors'
  // runs leave open.
  separate.first_budget_seconds = 0;
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
      auto refit = fit(entry, request, coverage);
      if (!refit) return refit.error();
      result = *refit;
    }
  }
  return result;
}

}  // namespace

std::string cache_directory() {
  if (const char* explicit_directory = std::getenv("DNNTUNE_CACHE_DIR"); explicit_directory && *explicit_directory)
    return explicit_directory;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/dnntune";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/dnntune";
  return "/tmp/dnntune-cache";
}

Expected<std::string> default_calibration_entry(const std::string& backend) {
  auto machine = probe::describe_this_machine();
  if (!machine) return machine.error();
  return entry_directory(*machine, backend);
}

double estimated_calibration_seconds(const DefaultCalibrationRequest& request) {
  // The plan shares the budget out among the stages and keeps within it.
  return request.first_run_seconds;
}

Expected<FirstRunPlan> plan_default_calibration(const DefaultCalibrationRequest& request) {
  if (auto checked = check_request(request); !checked) return checked.error();
  auto directory = default_calibration_entry(request.backend);
  if (!directory) return directory.error();
  const Entry entry(*directory);
  calibrate::CalibrationRequest calibrate;
  calibrate.models = request.models;
  calibrate.batches = request.batches;
  calibrate.backends = {request.backend};
  calibrate.budget_seconds = request.first_run_seconds;
  calibrate.directory = entry.measurements;
  calibrate.resume = true;
  calibrate.dry_run = true;
  auto prepared = calibrate::prepare_calibration(calibrate, nullptr);
  if (!prepared) return prepared.error();
  const auto [first, more] = split_by_priority(prepared->plan.measurements);
  auto measured = read_measured(entry);
  if (!measured) return measured.error();
  return plan_first_run(estimates_of(*prepared, first, more, *measured, request.first_run_seconds, 0));
}

Expected<DefaultCalibration> default_calibration(const DefaultCalibrationRequest& asked) {
  // The stages below call the callback unconditionally: a caller that wants no lines gets a no-op.
  DefaultCalibrationRequest request = asked;
  if (!request.progress) request.progress = [](const std::string&) {};
  const Progress& progress = request.progress;
  if (auto checked = check_request(request); !checked) return checked.error();
  auto directory = default_calibration_entry(request.backend);
  if (!directory) return directory.error();
  const Entry entry(*directory);
  const Coverage wanted = wanted_by(request);
  const auto ready = [&]() -> bool {
    return covers(read_coverage(entry.coverage), wanted) && static_cast<bool>(model::read_calibration(entry.calibration));
  };
  if (ready()) return DefaultCalibration{entry.calibration, entry.machine, ""};

  std::error_code error;
  fs::create_directories(entry.directory, error);
  if (error)
    return failure(entry.directory + ": cannot create the cache directory (" + error.message() +
                   "); set DNNTUNE_CACHE_DIR to a writable directory");
  auto lock = FileLock::acquire(entry.lock, [&](const std::string& holder) {
    progress("waiting for " + holder + ", which is calibrating this machine (lock " + entry.lock + ")");
  });
  if (!lock) return lock.error();
  // Another run may have made it while this one waited.
  if (ready()) return DefaultCalibration{entry.calibration, entry.machine, ""};

  Coverage coverage = read_coverage(entry.coverage);
  if (!fs::exists(entry.measurements + "/layers.jsonl")) {
    coverage.clear();  // nothing to refit from (a probed machine.json alone is kept and reused)
  } else if (auto readable = read_measurement_inputs({entry.measurements}); !readable) {
    if (auto moved = move_aside(entry.measurements, "the cached measurements cannot be read (" +
                                                        readable.error().message + ")", progress);
        !moved)
      return moved.error();
    coverage.clear();
  }
  if (covers(coverage, wanted)) {
    // Corrupt, or written by a dnntune whose model had other parameters: refit, never trust it.
    progress("the cached calibration is not usable (" + model::read_calibration(entry.calibration).error().message +
             "): rebuilding it from its measurements");
  } else {
    std::string names;
    for (const auto& model : request.models) names += (names.empty() ? "" : ", ") + model;
    progress("no calibration of this machine for " + names + " yet: calibrating (once; cached in " + entry.directory +
             ")");
    // Work a --batch list multiplies is announced with its estimate before it starts.
    const std::size_t new_batches = static_cast<std::size_t>(std::count_if(
        wanted.begin(), wanted.end(),
        [&](const auto& item) { return std::find(coverage.begin(), coverage.end(), item) == coverage.end(); }));
    const double minutes = std::ceil(estimated_calibration_seconds(request) / 60);
    progress("calibrating " + std::to_string(new_batches) + " new " + (new_batches == 1 ? "batch" : "batches") +
             " (about " + std::to_string(static_cast<long long>(minutes)) + " minute" + (minutes == 1 ? "" : "s") +
             ") ...");
    const auto started = std::chrono::steady_clock::now();
    return first_run(entry, request, wanted, coverage, started);
  }
  return fit(entry, request, coverage);
}

}  // namespace dnntune::pipeline
