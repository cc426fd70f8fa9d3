// cli/default_calibration.cpp — see default_calibration.hpp.
#include "cli/default_calibration.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/measurement_inputs.hpp"
#include "cli/version.hpp"
#include "common/json_file.hpp"
#include "model/calibration.hpp"
#include "model/fit.hpp"
#include "probe/layers/layer_backend.hpp"
#include "probe/layers/runner.hpp"
#include "probe/topology.hpp"

namespace dnntune::cli {
namespace {

namespace fs = std::filesystem;

void progress(const std::string& line) { std::cerr << "dnntune: " << line << std::endl; }

std::string file_safe(std::string text) {
  for (char& character : text)
    if (!std::isalnum(static_cast<unsigned char>(character)) && character != '.' && character != '-') character = '_';
  return text;
}

// "resnet152@32" for a built-in network; a file is named by its path (its content may change:
// then its layers differ, and the coverage check below measures the new ones).
std::string coverage_entry(const std::string& model, std::int64_t batch) {
  return model + "@" + std::to_string(batch);
}

// The (network, batch) pairs the cached measurements were planned for.
std::vector<std::string> read_coverage(const std::string& path) {
  auto document = read_json_file(path);
  if (!document || !document->is_object() || !document->contains("covered")) return {};
  try {
    return document->at("covered").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception&) {
    return {};
  }
}

}  // namespace

std::string cache_directory() {
  if (const char* explicit_directory = std::getenv("DNNTUNE_CACHE_DIR"); explicit_directory && *explicit_directory)
    return explicit_directory;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/dnntune";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/dnntune";
  return "/tmp/dnntune-cache";
}

Expected<std::string> default_calibration_path(const DefaultCalibrationRequest& request) {
  auto machine = probe::describe_this_machine();
  if (!machine) return machine.error();
  auto backend = probe::layers::make_backend(request.backend);
  if (!backend) return backend.error();
  const std::string key = probe::fingerprint(*machine) + "-" + request.backend + "-" +
                          file_safe((*backend)->version()) + "-dnntune" + DNNTUNE_VERSION;
  const std::string entry = cache_directory() + "/" + key;
  const std::string measurements = entry + "/measurements";
  const std::string calibration_path = entry + "/calibration.json";
  const std::string coverage_path = entry + "/covered.json";
  std::error_code error;
  fs::create_directories(entry, error);
  if (error) return failure(entry + ": cannot create the cache directory (" + error.message() + "); set DNNTUNE_CACHE_DIR");

  std::vector<std::string> covered = read_coverage(coverage_path);
  bool missing = false;
  for (const auto& model : request.models)
    for (std::int64_t batch : request.batches)
      if (std::find(covered.begin(), covered.end(), coverage_entry(model, batch)) == covered.end()) missing = true;
  if (!missing) {
    const auto cached = model::read_calibration(calibration_path);
    if (cached) return calibration_path;
    // Corrupt, or written by a dnntune whose model had other parameters: refit, never trust it.
    progress("the cached calibration is not usable (" + cached.error().message +
             "): rebuilding it from its measurements");
  }

  if (missing) {
    // Measure what this request needs besides what is there: the same directory, resumed, with
    // every network and batch covered so far plus the new ones.
    probe::layers::CalibrationRequest calibrate;
    std::vector<std::pair<std::string, std::int64_t>> wanted;
    for (const auto& item : covered) {
      const auto at = item.rfind('@');
      if (at != std::string::npos) wanted.emplace_back(item.substr(0, at), std::stoll(item.substr(at + 1)));
    }
    for (const auto& model : request.models)
      for (std::int64_t batch : request.batches) wanted.emplace_back(model, batch);
    for (const auto& [model, batch] : wanted) {
      if (std::find(calibrate.models.begin(), calibrate.models.end(), model) == calibrate.models.end())
        calibrate.models.push_back(model);
      if (std::find(calibrate.batches.begin(), calibrate.batches.end(), batch) == calibrate.batches.end())
        calibrate.batches.push_back(batch);
    }
    calibrate.backends = {request.backend};
    calibrate.budget_seconds = request.budget_seconds;
    calibrate.directory = measurements;
    calibrate.resume = fs::exists(measurements + "/layers.jsonl");
    calibrate.executable = fs::read_symlink("/proc/self/exe", error).string();
    if (error) return failure("cannot find this program's path (/proc/self/exe): " + error.message());
    std::string names;
    for (const auto& model : request.models) names += (names.empty() ? "" : ", ") + model;
    progress("no calibration of this machine for " + names + " yet: calibrating (about " +
             std::to_string(static_cast<int>(request.budget_seconds)) + " s, once; cached in " + entry + ")");
    auto prepared = probe::layers::prepare_calibration(calibrate, progress);
    if (!prepared) {
      // A measurement directory that cannot be resumed (corrupt, or another machine's) is rebuilt.
      progress("the cached measurements cannot be resumed (" + prepared.error().message + "): measuring anew");
      fs::remove_all(measurements, error);
      calibrate.resume = false;
      prepared = probe::layers::prepare_calibration(calibrate, progress);
      if (!prepared) return prepared.error();
    }
    auto summary = probe::layers::run_calibration(*prepared, {progress, {}});
    if (!summary) return summary.error();
    if (auto anchors = probe::layers::run_anchors(*prepared, progress); !anchors) return anchors.error();
    covered.clear();
    for (const auto& [model, batch] : wanted) covered.push_back(coverage_entry(model, batch));
  }

  progress("fitting the cost model to the measurements");
  auto inputs = read_measurement_inputs({measurements});
  if (!inputs) return inputs.error();
  auto profile = probe::read_machine_profile(measurements + "/machine.json");
  if (!profile) return profile.error();
  auto calibration =
      model::fit_calibration(inputs->records, *profile, request.backend, inputs->files, model::FitOptions{});
  if (!calibration) return calibration.error();
  if (auto written = write_json_file(calibration_path, nlohmann::json::parse(model::to_json_text(*calibration))); !written)
    return written.error();
  if (auto written = write_json_file(coverage_path, {{"covered", covered}}); !written) return written.error();
  return calibration_path;
}

}  // namespace dnntune::cli
