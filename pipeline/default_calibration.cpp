// pipeline/default_calibration.cpp — see default_calibration.hpp.
#include "pipeline/default_calibration.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

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
#include "probe/topology.hpp"
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
  if (!(request.budget_seconds > 0) || !(request.budget_cap_seconds >= request.budget_seconds))
    return bad_input("the calibration budget must be positive and at most its cap");
  for (const double budget : {request.separating_anchor_budget_seconds, request.close_call_budget_seconds})
    if (!(budget >= 0) || !std::isfinite(budget)) return bad_input("the anchor budgets must be zero or more seconds");
  if (!(request.first_run_seconds >= 0) || !std::isfinite(request.first_run_seconds))
    return bad_input("the first run's time limit must be zero (none) or more seconds");
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

// The anchors under glibc-tuned, jemalloc and tcmalloc take at most this much of a first run
// (resnet18 at batch 8: all of them; resnet152 at batch 32: about one), and only what the
// separating anchors left of its time limit.
constexpr double allocator_anchor_seconds = 60;
// The base anchor run again (by PyTorch from Python, then by the C++ trainer) takes at most this
// much (resnet50 b8 at 1x2: about 25 s), before the allocator anchors: predictions under the
// default allocator use it.
constexpr double repeated_anchor_seconds = 40;

Expected<std::string> worker_executable(const DefaultCalibrationRequest& request) {
  if (!request.executable.empty()) return request.executable;
  return self_executable_path();
}

// A real anchor at one new batch (a warm-up step and three timed ones; resnet50 b16 at 1x2
// about 25 s): what each new batch adds to a first run, for its announcement.
constexpr double anchor_seconds_per_batch = 30;

// The entry's folder name: this machine's fingerprint, the backend and its version, dnntune's.
Expected<std::string> entry_directory(const records::MachineProfile& machine, const std::string& backend_name) {
  auto backend = calibrate::make_backend(backend_name);
  if (!backend) return backend.error();
  return cache_directory() + "/" + records::fingerprint(machine) + "-" + backend_name + "-" +
         file_safe((*backend)->version()) + "-dnntune" + DNNTUNE_VERSION;
}

// The layer micro-runs of the request's networks and batches, added to the entry's measurements
// (resumed), and the anchors under the default allocator; `coverage` is emptied when those had to
// be moved aside. Returns the prepared calibration, which the other allocators' anchors reuse.
Expected<calibrate::PreparedCalibration> measure(const Entry& entry, const DefaultCalibrationRequest& request,
                                                 Coverage& coverage) {
  const Progress& progress = request.progress;
  calibrate::CalibrationRequest calibrate;
  calibrate.models = request.models;
  calibrate.batches = request.batches;
  calibrate.backends = {request.backend};
  calibrate.budget_seconds = request.budget_seconds;
  calibrate.budget_cap_seconds = request.budget_cap_seconds;
  // A first run's anchor: one untimed step (the one that faults every activation in), then
  // three timed ones under glibc's default malloc and two under the others. The default is still
  // settling on its second step: its mmap threshold moves and big activations are mmapped and
  // faulted in anew (resnet50 b16, 2 threads: steps of 2.49 and 1.90 s, where 5-step training
  // settles at 1.84 s; the other allocators' two steps agreed within 6% in all 18 anchors of an
  // accuracy run). A median of three drops that step; resnet152 at batch 32 on 2 cores stays
  // within about a minute.
  calibrate.anchor_warmup = 1;
  calibrate.anchor_iterations = 3;
  calibrate.allocator_anchor_iterations = 2;
  calibrate.allocator_anchor_budget_seconds = allocator_anchor_seconds;
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
  if (!prepared) return prepared.error();
  char line[240];
  std::snprintf(line, sizeof line, "measuring %zu layer passes%s (about %.0f s, within %.0f s)",
                prepared->plan.measurements.size(),
                prepared->already_recorded
                    ? (", " + std::to_string(prepared->already_recorded) + " already recorded").c_str()
                    : "",
                prepared->plan.estimated_seconds, prepared->request.budget_seconds);
  progress(line);
  auto summary = calibrate::run_calibration(*prepared, {progress, {}});
  if (!summary) return summary.error();
  // The anchor: the network trained for real at the base setting, which the fit checks the
  // layer sums against (a prediction is "measured" only when a real step backs it). The other
  // allocators' come last (fit_and_separate): a first run's time goes to the settings first.
  if (auto anchors = calibrate::run_anchors(*prepared, progress, calibrate::AnchorKinds::default_allocator); !anchors)
    return anchors.error();
  std::snprintf(line, sizeof line, "measured in %.0f s: %d ok, %d failed, %d skipped by the budget", summary->seconds,
                summary->ok, summary->failed, summary->skipped);
  progress(line);
  return std::move(*prepared);
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

// The first fit, then the anchors that separate the tuner's top candidates, then the anchors under
// the other allocators, then the refit that uses them (model/anchors.hpp reads every anchor in
// DIR/network.jsonl). Measured before this order: inception_v3 b8's micro-runs, base anchor and
// allocator anchors left 13 s of the first run, and its 2x1 anchor (a one-thread cliff, 3.5x
// slower than predicted) was never trained.
Expected<DefaultCalibration> fit_and_separate(const Entry& entry, const DefaultCalibrationRequest& request,
                                              const Coverage& coverage, calibrate::PreparedCalibration prepared,
                                              std::chrono::steady_clock::time_point first_run_started) {
  auto first = fit(entry, request, coverage, false);
  if (!first) return first.error();
  if (first->calibration_path.empty()) return first;  // nothing measured: nothing cached either
  auto calibration = model::read_calibration(first->calibration_path);
  if (!calibration) return calibration.error();
  auto executable = worker_executable(request);
  if (!executable) return executable.error();
  SeparatingAnchorRequest separate;
  separate.models = request.models;
  separate.batches = request.batches;
  separate.directory = entry.measurements;
  separate.executable = *executable;
  // What is left of the first run's time limit, at most `budget` (all of it without a limit).
  const auto left_of_first_run = [&](double budget) {
    if (!(request.first_run_seconds > 0)) return budget;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - first_run_started).count();
    return std::clamp(request.first_run_seconds - elapsed, 0.0, budget);
  };
  separate.budget_seconds = left_of_first_run(request.separating_anchor_budget_seconds);
  separate.progress = request.progress;
  auto separating = run_separating_anchors(*calibration, separate);
  if (!separating) return separating.error();
  auto repeated =
      calibrate::run_repeated_base_anchors(prepared, request.progress, left_of_first_run(repeated_anchor_seconds));
  if (!repeated) return repeated.error();
  prepared.request.allocator_anchor_budget_seconds = left_of_first_run(allocator_anchor_seconds);
  auto allocators = calibrate::run_anchors(prepared, request.progress, calibrate::AnchorKinds::other_allocators);
  if (!allocators) return allocators.error();
  const int trained = *separating + *repeated + *allocators;
  DefaultCalibration result = *first;
  if (trained == 0) {
    if (auto written = write_coverage(entry.coverage, coverage); !written) return written.error();
  } else {
    request.progress("refitting with " + std::to_string(trained) + " more anchor" + (trained == 1 ? "" : "s"));
    auto refit = fit(entry, request, coverage);
    if (!refit) return refit.error();
    result = *refit;
  }
  // The close calls the anchors' runs cannot settle, trained again one run at a time and refitted
  // after each, while the first run's time allows (pipeline/separating_anchors.hpp). The entry is
  // complete already: an interrupted run loses nothing but this refinement.
  const auto settling_started = std::chrono::steady_clock::now();
  for (;;) {
    const double spent =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - settling_started).count();
    separate.budget_seconds = left_of_first_run(std::max(0.0, request.close_call_budget_seconds - spent));
    if (!(separate.budget_seconds > 0)) break;
    auto current = model::read_calibration(result.calibration_path);
    if (!current) return current.error();
    auto settled = run_close_call_anchor(*current, separate);
    if (!settled) return settled.error();
    if (*settled == 0) break;
    auto refit = fit(entry, request, coverage);
    if (!refit) return refit.error();
    result = *refit;
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

double estimated_calibration_seconds(const DefaultCalibrationRequest& request, std::size_t new_batches) {
  // The micro-runs stop at their cap and each new batch trains its own anchor. The first run's
  // separating, allocator and close-call anchors come on top: within its time limit when it has
  // one (they get what is left of it), else each within its own budget.
  const double measured = request.budget_cap_seconds + anchor_seconds_per_batch * static_cast<double>(new_batches);
  if (request.first_run_seconds > 0) return std::max(request.first_run_seconds, measured);
  return measured + request.separating_anchor_budget_seconds + request.close_call_budget_seconds +
         allocator_anchor_seconds + repeated_anchor_seconds;
}

Expected<DefaultCalibration> default_calibration(const DefaultCalibrationRequest& asked) {
  // The stages below call the callback unconditionally: a caller that wants no lines gets a no-op.
  DefaultCalibrationRequest request = asked;
  if (!request.progress) request.progress = [](const std::string&) {};
  const Progress& progress = request.progress;
  if (auto checked = check_request(request); !checked) return checked.error();
  auto machine = probe::describe_this_machine();
  if (!machine) return machine.error();
  auto directory = entry_directory(*machine, request.backend);
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
    const double minutes = std::ceil(estimated_calibration_seconds(request, new_batches) / 60);
    progress("calibrating " + std::to_string(new_batches) + " new " + (new_batches == 1 ? "batch" : "batches") +
             " (about " + std::to_string(static_cast<long long>(minutes)) + " minute" + (minutes == 1 ? "" : "s") +
             ") ...");
    const auto started = std::chrono::steady_clock::now();
    auto prepared = measure(entry, request, coverage);
    if (!prepared) return prepared.error();
    for (const auto& item : wanted)
      if (std::find(coverage.begin(), coverage.end(), item) == coverage.end()) coverage.push_back(item);
    return fit_and_separate(entry, request, coverage, std::move(*prepared), started);
  }
  return fit(entry, request, coverage);
}

}  // namespace dnntune::pipeline
