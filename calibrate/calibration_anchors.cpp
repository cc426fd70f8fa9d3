// calibrate/calibration_anchors.cpp — the anchors of a calibration (runner.hpp,
// train/anchor.hpp): each network of the request trained for real at each batch, in the
// plan's base setting, unless DIR/network.jsonl already has that run; then the same run under
// each other allocator variant installed here, within the allocator budget
// (model/allocation.hpp fits the allocator term from them); then each of the request's extra
// anchor settings (--anchor-settings) under the default allocator.
#include <algorithm>
#include <chrono>
#include <filesystem>

#include "common/number_grammar.hpp"
#include "common/parse_number.hpp"
#include "common/text_format.hpp"
#include "probe/allocators.hpp"
#include "calibrate/runner.hpp"
#include "probe/memory_budget.hpp"
#include "records/measurement.hpp"
#include "train/anchor.hpp"
#include "train/python_runner.hpp"
#include "train/trainer.hpp"
#include "workloads/costs.hpp"

namespace dnntune::calibrate {

namespace {

// The steps of an anchor under another allocator, and a trainer's start per process: what the
// next variant's run is estimated from (pipeline/first_run_plan.hpp counts the same).
int variant_steps(const PreparedCalibration& calibration) {
  return calibration.request.allocator_anchor_warmup + calibration.request.allocator_anchor_iterations;
}
constexpr double variant_start_seconds = 5;

// The default first, then the variants (glibc-tuned first): a short budget still compares the
// default with the reference.
std::vector<std::string> allocators_to_anchor(const CalibrationRequest& request) {
  std::vector<std::string> names = {"default"};
  const std::vector<std::string> variants =
      request.allocator_variants.empty() ? allocator_variants_to_anchor() : request.allocator_variants;
  names.insert(names.end(), variants.begin(), variants.end());
  return names;
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : ", ") + word;
  return text;
}

// One anchor: network `index` of the request at `batch` and `setting` under `allocator`, its timed
// steps stopped where `time_limit_seconds` (> 0) ends (train --time-limit); `as_variant`: the steps
// of the allocator anchors (a run of glibc's defaults they are compared with takes theirs too).
Expected<void> train_anchor(const PreparedCalibration& calibration, std::size_t index, std::int64_t batch,
                            const Setting& setting, const std::string& allocator, double time_limit_seconds = 0,
                            const std::string& runner = records::kCppTrainer, bool as_variant = false) {
  train::AnchorRequest request;
  request.executable = calibration.request.executable;
  // A network file by its absolute path: the fit finds the network again from the record's command.
  const std::string& model = calibration.request.models[index];
  std::error_code error;
  request.model = std::filesystem::is_regular_file(model, error) ? std::filesystem::absolute(model).string() : model;
  request.batch = batch;
  request.threads = setting.threads;
  request.processes = setting.processes;
  request.directory = calibration.request.directory;
  const bool variant_steps = as_variant || allocator != "default";
  request.warmup = variant_steps ? calibration.request.allocator_anchor_warmup : calibration.request.anchor_warmup;
  request.iterations =
      variant_steps ? calibration.request.allocator_anchor_iterations : calibration.request.anchor_iterations;
  request.allocator = allocator;
  request.time_limit_seconds = time_limit_seconds;
  request.runner = runner;
  return train::run_anchor(request);
}

}  // namespace

std::vector<std::string> allocator_variants_to_anchor() {
  std::vector<std::string> names = {records::kReferenceAllocator};
  for (const probe::AllocatorVariant& variant : probe::installed_allocators())
    if (variant.name != "default" && variant.name != records::kReferenceAllocator) names.push_back(variant.name);
  return names;
}

namespace {

// Whether `record` is the iteration of an ok anchor run of `network` at `batch` and `setting` under
// `allocator` on the machine `fingerprint` (one node): what recorded_anchor_runs finds.
bool is_anchor_run(const records::Measurement& record, const std::string& fingerprint, const std::string& network,
                   std::int64_t batch, const Setting& setting, const std::string& allocator) {
  return record.kind == records::MeasurementKind::network && record.pass == "iteration" &&
         record.status == records::MeasurementStatus::ok && record.machine_fingerprint == fingerprint &&
         record.network == network && record.batch == batch && record.threads == setting.threads &&
         record.smt == setting.smt && record.processes == setting.processes && record.nodes == 1 &&
         record.allocator == allocator;
}

}  // namespace

std::vector<const records::Measurement*> recorded_anchor_runs(const std::vector<records::Measurement>& records,
                                                              const std::string& fingerprint,
                                                              const std::string& network, std::int64_t batch,
                                                              const Setting& setting, const std::string& allocator) {
  std::vector<const records::Measurement*> runs;
  for (const records::Measurement& record : records)
    if (is_anchor_run(record, fingerprint, network, batch, setting, allocator)) runs.push_back(&record);
  return runs;
}

const records::Measurement* recorded_anchor(const std::vector<records::Measurement>& records,
                                            const std::string& fingerprint, const std::string& network,
                                            std::int64_t batch, const Setting& setting, const std::string& allocator) {
  const auto runs = recorded_anchor_runs(records, fingerprint, network, batch, setting, allocator);
  return runs.empty() ? nullptr : runs.front();
}

namespace {

// The first run of recorded_anchor's by `runner` (records::training_runner), or null.
const records::Measurement* recorded_anchor_by(const std::vector<records::Measurement>& records,
                                               const std::string& fingerprint, const std::string& network,
                                               std::int64_t batch, const Setting& setting, const std::string& allocator,
                                               const std::string& runner) {
  for (const records::Measurement* run : recorded_anchor_runs(records, fingerprint, network, batch, setting, allocator))
    if (records::training_runner(*run) == runner) return run;
  return nullptr;
}

std::string by_runner(const std::string& runner) {
  return runner == records::kPythonTrainer ? " by PyTorch from Python" : "";
}

}  // namespace

Expected<std::vector<Setting>> parse_anchor_settings(const std::string& text) {
  const auto items = split_list_items(text, "--anchor-settings", Repeats::refused);
  if (!items) return items.error();
  std::vector<Setting> settings;
  for (const std::string& item : *items) {
    const std::size_t times = item.find('x');
    const auto processes = times == std::string::npos ? std::nullopt : parse_int64(item.substr(0, times));
    const auto threads = times == std::string::npos ? std::nullopt : parse_int64(item.substr(times + 1));
    if (!processes || !threads || *processes < 1 || *threads < 1 || *processes > 4096 || *threads > 4096)
      return bad_input("--anchor-settings: '" + printable(item) +
                       "' is not PROCESSESxTHREADS (positive whole numbers, e.g. 1x1,2x1; SMT off)");
    const Setting setting{static_cast<int>(*threads), false, static_cast<int>(*processes)};
    // 1x1 and 01x1 are one setting written twice.
    if (std::find(settings.begin(), settings.end(), setting) != settings.end())
      return bad_input("--anchor-settings: \"" + printable(item) + "\" is listed twice");
    settings.push_back(setting);
  }
  return settings;
}

Expected<int> run_anchors(const PreparedCalibration& calibration,
                          const std::function<void(const std::string&)>& progress, AnchorKinds kinds) {
  const bool default_allocator = kinds != AnchorKinds::other_allocators;
  const bool other_allocators = kinds != AnchorKinds::default_allocator;
  auto read = train::read_anchor_records(calibration.request.directory);
  if (!read) return read.error();
  std::vector<records::Measurement> recorded = std::move(*read);
  const Setting base =
      calibration.plan_request.settings.empty() ? Setting{} : calibration.plan_request.settings.front();
  const std::vector<std::string> allocators = allocators_to_anchor(calibration.request);
  const bool planned_variants = !calibration.request.allocator_variants.empty();
  const std::string& variants_runner = calibration.request.allocator_anchor_runner;
  if (progress && other_allocators && !planned_variants && allocators.size() == 2)
    progress(
        "allocator anchors: neither jemalloc nor tcmalloc is installed here (Debian: libjemalloc2, "
        "libtcmalloc-minimal4), so only glibc's defaults and glibc keeping its memory are compared");
  const double allocator_budget = calibration.request.allocator_anchor_budget_seconds;
  double allocator_seconds_spent = 0, last_run_seconds = 0;
  int trained = 0;
  // plan_request.networks are the request's models loaded, in order; the trainer takes the
  // model as given (a network file's path), records carry the network's name.
  const auto& networks = calibration.plan_request.networks;
  for (std::size_t index = 0; index < networks.size() && index < calibration.request.models.size(); ++index)
    for (const std::int64_t batch : calibration.plan_request.batches) {
      const workloads::Network& network = networks[index];
      const std::string label = network.name + " mb" + std::to_string(batch);
      // Like every calibration step, the anchor stays within what the machine can spare: a
      // network that does not fit is left unanchored (its predictions then say so), not OOM-killed.
      const auto cost = workloads::network_cost(network, batch);
      const double needed = cost ? cost->training_memory_bytes() * base.processes : 0;
      if (const auto spare = probe::spare_memory_bytes(); spare && needed > 0.8 * static_cast<double>(*spare)) {
        if (default_allocator && progress &&
            !recorded_anchor(recorded, calibration.fingerprint, network.name, batch, base, "default"))
          progress("anchor of " + label + " skipped: training it needs about " +
                   std::to_string(static_cast<long long>(needed / 1e9 + 0.5)) + " GB, this machine can spare " +
                   std::to_string(static_cast<long long>(static_cast<double>(*spare) / 1e9)) + " GB");
        continue;
      }
      std::vector<std::string> over_budget;
      bool first_variant = true;
      for (const std::string& allocator : allocators) {
        // glibc's defaults by the variants' trainer when that is not the C++ trainer (whose run of
        // them is the base anchor): the run the variants are compared with.
        const bool variants_default =
            allocator == "default" && other_allocators && !default_allocator && variants_runner != records::kCppTrainer;
        const std::string& runner =
            allocator == "default" && !variants_default ? std::string(records::kCppTrainer) : variants_runner;
        const records::Measurement* done =
            recorded_anchor_by(recorded, calibration.fingerprint, network.name, batch, base, allocator, runner);
        // The first variant planned, and the run of glibc's defaults it is compared with, are
        // trained whatever the allocator budget says.
        const bool planned_first = planned_variants && (variants_default || (allocator != "default" && first_variant));
        if (allocator != "default") first_variant = false;
        if (done) {
          // A run recorded earlier tells how long a variant's takes: its steps and a start.
          if (last_run_seconds == 0)
            last_run_seconds =
                done->median_seconds * variant_steps(calibration) + variant_start_seconds * base.processes;
          continue;
        }
        const bool variant = allocator != "default" || variants_default;
        if ((!variant && !default_allocator) || (variant && !other_allocators)) continue;
        if (variant && !planned_first && allocator_seconds_spent + last_run_seconds > allocator_budget) {
          over_budget.push_back(allocator);
          continue;
        }
        if (progress)
          progress("anchor: training " + label + " for real (" + to_string(base) + ")" +
                   (allocator == "default" ? "" : " under the " + allocator + " allocator") + by_runner(runner) +
                   (variants_default ? ", the run of glibc's defaults the allocator variants are compared with" : ""));
        const auto started = std::chrono::steady_clock::now();
        // Another allocator can be several times slower than the default (docs/results.md):
        // its timed steps stop at the end of the allocator budget.
        const double limit = variant ? std::max(1.0, allocator_budget - allocator_seconds_spent)
                                     : calibration.request.anchor_time_limit_seconds;
        if (auto run = train_anchor(calibration, index, batch, base, allocator, limit, runner, variants_default); !run)
          return run.error();
        last_run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (variant) allocator_seconds_spent += last_run_seconds;
        ++trained;
      }
      if (!over_budget.empty() && progress)
        progress("allocator anchors of " + label + " under " + joined(over_budget) + " skipped: each takes about " +
                 std::to_string(static_cast<long long>(last_run_seconds + 0.5)) + " s, past the allocator budget of " +
                 std::to_string(static_cast<long long>(allocator_budget)) +
                 " s (calibrate --allocator-budget); their gain is then the prior's, never recommended");
      // The settings asked for besides the base (a benchmark anchoring every setting it compares).
      for (const Setting& setting : calibration.request.anchor_settings) {
        if (!default_allocator || setting == base ||
            recorded_anchor(recorded, calibration.fingerprint, network.name, batch, setting, "default"))
          continue;
        if (const auto spare = probe::spare_memory_bytes();
            spare && cost && cost->training_memory_bytes() * setting.processes > 0.8 * static_cast<double>(*spare)) {
          if (progress)
            progress("anchor of " + label + " at " + to_string(setting) + " skipped: it does not fit in memory");
          continue;
        }
        if (progress) progress("anchor: training " + label + " for real (" + to_string(setting) + ")");
        if (auto run = train_anchor(calibration, index, batch, setting, "default"); !run) return run.error();
        ++trained;
      }
    }
  return trained;
}

Expected<int> run_repeated_base_anchors(const PreparedCalibration& calibration,
                                        const std::function<void(const std::string&)>& progress,
                                        double budget_seconds) {
  auto read = train::read_anchor_records(calibration.request.directory);
  if (!read) return read.error();
  const std::vector<records::Measurement> recorded = std::move(*read);
  const Setting base =
      calibration.plan_request.settings.empty() ? Setting{} : calibration.plan_request.settings.front();
  const auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  // In order: the C++ trainer a second time (its first is the base anchor), then PyTorch from
  // Python once. The C++ run first: it trains every other setting, so when only one more run fits
  // it is the one that keeps the base setting comparable with them (model/anchors.hpp pools a
  // Python run only as the third of three).
  const std::vector<std::pair<std::string, int>> wanted_runs = {{records::kCppTrainer, 2},
                                                                {records::kPythonTrainer, 1}};
  double spent = 0;
  int trained = 0;
  const auto& networks = calibration.plan_request.networks;
  for (std::size_t index = 0; index < networks.size() && index < calibration.request.models.size(); ++index) {
    const workloads::Network& network = networks[index];
    std::optional<Expected<void>> python_runs;  // checked once per network, and only when a run would fit
    for (const std::int64_t batch : calibration.plan_request.batches) {
      const std::string label = network.name + " mb" + std::to_string(batch);
      const records::Measurement* base_run =
          recorded_anchor(recorded, calibration.fingerprint, network.name, batch, base, "default");
      if (!base_run) continue;  // no base anchor (memory, a failure): said already; nothing to repeat
      for (const auto& [runner, wanted] : wanted_runs) {
        // Runs recorded already (resumed), by this runner.
        const auto runs = recorded_anchor_runs(recorded, calibration.fingerprint, network.name, batch, base, "default");
        const auto recorded_runs = std::count_if(runs.begin(), runs.end(), [&](const records::Measurement* record) {
          return records::training_runner(*record) == runner;
        });
        const std::string by = runner == records::kPythonTrainer
                                   ? " by PyTorch from Python (torchvision), as users train"
                                   : " again by the C++ trainer, in a process of its own";
        if (recorded_runs >= wanted) continue;
        // Its steps as long as the base anchor's, and a start (Python's: importing torch and
        // torchvision and building the model, seconds).
        const double estimate =
            base_run->median_seconds * (calibration.request.anchor_warmup + calibration.request.anchor_iterations) +
            (runner == records::kPythonTrainer ? 8 : 3);
        if (spent + estimate > budget_seconds) {
          say("anchor of " + label + by + " skipped: it would take about " +
              std::to_string(static_cast<long long>(estimate + 0.5)) + " s, past the " +
              std::to_string(static_cast<long long>(std::max(0.0, budget_seconds - spent))) + " s left for it");
          continue;
        }
        if (runner == records::kPythonTrainer) {
          if (!python_runs) {
            python_runs = train::check_python_runner(network.name);
            if (!*python_runs)
              say("anchor of " + network.name + " by PyTorch from Python skipped: " + python_runs->error().message);
          }
          if (!*python_runs) continue;
        }
        say("anchor: training " + label + " for real (" + to_string(base) + ")" + by);
        const auto started = std::chrono::steady_clock::now();
        if (auto run =
                train_anchor(calibration, index, batch, base, "default", std::max(1.0, budget_seconds - spent), runner);
            !run)
          return run.error();
        spent += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        ++trained;
      }
    }
  }
  return trained;
}

}  // namespace dnntune::calibrate
