// pipeline/default_calibration.cpp — see default_calibration.hpp.
#include "pipeline/default_calibration.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/digest.hpp"
#include "pipeline/cache_entry.hpp"
#include "pipeline/first_run.hpp"
#include "pipeline/measurement_inputs.hpp"
#include "pipeline/version.hpp"
#include "common/file_lock.hpp"
#include "common/files.hpp"
#include "common/json_file.hpp"
#include "common/self_executable.hpp"
#include "model/calibration.hpp"
#include "model/fit.hpp"
#include "calibrate/layer_backend.hpp"
#include "calibrate/runner.hpp"
#include "probe/topology.hpp"
#include "records/machine_profile.hpp"
#include "records/measurement.hpp"
#include "workloads/network_at_batch.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::pipeline {
namespace {

namespace fs = std::filesystem;

std::string file_safe(std::string text) {
  for (char& character : text)
    if (!std::isalnum(static_cast<unsigned char>(character)) && character != '.' && character != '-') character = '_';
  return text;
}

// covered.json: "resnet152@32" for each (network, batch) the measurements were planned for; a
// network file is named by its content (covered_network_key): by any path the same network, and
// once edited a new one, whose new layers are measured. An
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

Coverage wanted_by(const DefaultCalibrationRequest& request) {
  Coverage wanted;
  for (const auto& model : request.models)
    for (const std::int64_t batch : request.batches) wanted.push_back({covered_network_key(model), batch});
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
      return bad_input("batch " + std::to_string(batch) + " out of range (1 to " +
                       std::to_string(workloads::max_batch) + ")");
  if (!(request.first_run_seconds > 0) || !std::isfinite(request.first_run_seconds))
    return bad_input("the first run's budget must be a positive number of seconds");
  return {};
}

// Moves an unusable measurement directory aside, kept for inspection, so the entry is rebuilt.
Expected<void> move_aside(const std::string& directory, const std::string& why, const Progress& progress) {
  if (!fs::exists(directory)) return {};
  const auto stamp =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string kept = directory + ".unusable-" + std::to_string(stamp);
  std::error_code error;
  fs::rename(directory, kept, error);
  if (error) return failure(directory + ": cannot move it aside (" + error.message() + ")");
  progress(why + ": kept as " + kept + ", measuring anew");
  return {};
}

// The entry's folder name: this machine's fingerprint, the backend and its version, dnntune's.
Expected<std::string> entry_directory(const records::MachineProfile& machine, const std::string& backend_name) {
  auto version = calibrate::backend_version(backend_name);
  if (!version) return version.error();
  return cache_directory() + "/" + records::fingerprint(machine) + "-" + backend_name + "-" + file_safe(*version) +
         "-dnntune" + DNNTUNE_VERSION;
}

}  // namespace

std::string covered_network_key(const std::string& model) {
  const auto& built_in = workloads::known_network_names();
  if (std::find(built_in.begin(), built_in.end(), model) != built_in.end()) return model;  // as load_network reads it
  const auto content = read_input_file(model);
  std::error_code error;
  if (!content) return fs::weakly_canonical(fs::absolute(model, error), error).string();
  return "file-" + digest_hex(*content);  // which file, as records::fingerprint names a machine
}

Expected<void> write_coverage(const std::string& path, const Coverage& coverage) {
  std::vector<std::string> items;
  for (const auto& covered : coverage) items.push_back(covered.to_text());
  return write_json_file(path, {{"covered", items}}, WrittenFile::owned);
}

Expected<std::string> worker_executable(const DefaultCalibrationRequest& request) {
  if (!request.executable.empty()) return request.executable;
  return self_executable_path();
}

Expected<calibrate::PreparedCalibration> prepare_entry(const Entry& entry, const DefaultCalibrationRequest& request,
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
    if (auto moved =
            move_aside(entry.measurements,
                       "the cached measurements cannot be resumed (" + prepared.error().message + ")", progress);
        !moved)
      return moved.error();
    coverage.clear();
    if (auto forgotten = write_coverage(entry.coverage, coverage); !forgotten) return forgotten.error();
    calibrate.resume = false;
    prepared = calibrate::prepare_calibration(calibrate, progress);
  }
  return prepared;
}

Expected<DefaultCalibration> fit_entry(const Entry& entry, const DefaultCalibrationRequest& request,
                                       const Coverage& coverage, bool last) {
  const Progress& progress = request.progress;
  DefaultCalibration result;
  result.machine_path = entry.machine;
  auto inputs = read_measurement_inputs({entry.measurements});
  if (inputs)
    for (const auto& line : skipped_lines_report(inputs->skipped_lines)) progress(line);
  const bool measured =
      inputs && std::any_of(inputs->records.begin(), inputs->records.end(), [](const auto& record) {
        return record.kind == records::MeasurementKind::layer && record.status == records::MeasurementStatus::ok;
      });
  if (!measured) {
    result.note = "no layer could be measured within the budget, so this answer is the model's alone (the built-in " +
                  request.backend +
                  " reference calibration on this machine's probed peaks); the next run measures again";
    return result;
  }
  progress("fitting the cost model to the measurements");
  if (auto written = fit_and_write_calibration(*inputs, result.machine_path, request.backend, entry.calibration);
      !written)
    return written.error();
  if (last)
    if (auto written = write_coverage(entry.coverage, coverage); !written) return written.error();
  result.calibration_path = entry.calibration;
  return result;
}

Expected<void> fit_and_write_calibration(const MeasurementInputs& inputs, const std::string& machine_path,
                                         const std::string& backend, const std::string& calibration_path) {
  auto profile = records::read_machine_profile(machine_path);
  if (!profile) return profile.error();
  auto calibration = model::fit_calibration(inputs.records, *profile, backend, inputs.files, model::FitOptions{});
  if (!calibration) return calibration.error();
  return write_json_file(calibration_path, nlohmann::json::parse(model::to_json_text(*calibration)),
                         WrittenFile::owned);
}

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
  auto estimates = first_run_estimates(entry, *prepared, request.first_run_seconds, 0);
  if (!estimates) return estimates.error();
  return plan_first_run(*estimates);
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
    return covers(read_coverage(entry.coverage), wanted) &&
           static_cast<bool>(model::read_calibration(entry.calibration));
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
    if (auto moved = move_aside(entry.measurements,
                                "the cached measurements cannot be read (" + readable.error().message + ")", progress);
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
    const std::size_t new_batches =
        static_cast<std::size_t>(std::count_if(wanted.begin(), wanted.end(), [&](const auto& item) {
          return std::find(coverage.begin(), coverage.end(), item) == coverage.end();
        }));
    const double minutes = std::ceil(estimated_calibration_seconds(request) / 60);
    progress("calibrating " + std::to_string(new_batches) + " new " + (new_batches == 1 ? "batch" : "batches") +
             " (about " + std::to_string(static_cast<long long>(minutes)) + " minute" + (minutes == 1 ? "" : "s") +
             ") ...");
    // covered.json vouches for measurements; where they are gone or moved aside it says what is
    // left before anything is measured, else a first run killed before its end would be taken for
    // a finished one and refitted from its partial records.
    if (auto written = write_coverage(entry.coverage, coverage); !written) return written.error();
    const auto started = std::chrono::steady_clock::now();
    return first_run(entry, request, wanted, coverage, started);
  }
  return fit_entry(entry, request, coverage);
}

}  // namespace dnntune::pipeline
