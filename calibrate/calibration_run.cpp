// calibrate/calibration_run.cpp — running a prepared calibration (runner.hpp): the
// numerical check of each backend, then the plan group by group (one set of worker processes
// per backend and setting), a record appended per measurement, the budget enforced as it goes:
// before each group the rest of the plan is selected again with estimates corrected by what was
// measured so far, a measurement that no longer fits is recorded as skipped, and one that runs
// past the end of the budget is killed.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "calibrate/corunning.hpp"
#include "calibrate/layer_operands.hpp"
#include "calibrate/runner.hpp"
#include "probe/timing.hpp"

namespace dnntune::calibrate {

namespace {

std::string duration(double seconds) {
  const long total = std::lround(std::max(0.0, seconds));
  char text[32];
  std::snprintf(text, sizeof text, "%ld:%02ld", total / 60, total % 60);
  return text;
}

std::string what(const PlannedMeasurement& measurement) {
  return measurement.backend + ", " + to_string(measurement.setting) + ": " +
         (measurement.whole_network ? measurement.network + " " + whole_network_pass
                                    : measurement.descriptor + " " + workloads::pass_name(measurement.pass)) +
         " mb" + std::to_string(measurement.batch);
}

// Measured / estimated seconds, per backend and setting (a single thread can take another
// kernel than several), falling back to the backend's, to correct the estimates of the rest.
// Measurements on another kernel than the base setting's (a dispatch cliff, orders of magnitude
// slower than estimated) correct only each other.
class EstimateCorrection {
 public:
  void add(const PlannedMeasurement& measurement, double actual) {
    for (const auto& key : keys(measurement)) {
      totals_[key].first += measurement.estimated_seconds;
      totals_[key].second += actual;
    }
  }
  double corrected(const PlannedMeasurement& measurement) const {
    for (const auto& key : keys(measurement)) {
      const auto found = totals_.find(key);
      if (found != totals_.end() && found->second.first > 0)
        return measurement.estimated_seconds * std::clamp(found->second.second / found->second.first, 0.1, 100.0);
    }
    return measurement.estimated_seconds;
  }

 private:
  static std::vector<std::string> keys(const PlannedMeasurement& measurement) {
    const std::string setting = measurement.backend + ", " + to_string(measurement.setting);
    if (measurement.other_kernel) return {setting + ", other kernel"};
    return {setting, measurement.backend};
  }
  std::map<std::string, std::pair<double, double>> totals_;  // estimated, actual
};

bool same_group(const PlannedMeasurement& left, const PlannedMeasurement& right) {
  return left.backend == right.backend && left.setting == right.setting;
}

class CalibrationRun {
 public:
  CalibrationRun(const PreparedCalibration& calibration, const RunHooks& hooks)
      : calibration_(calibration),
        hooks_(hooks),
        pending_(calibration.plan.measurements),
        deadline_(calibration.started_at + calibration.request.budget_seconds) {
    summary_.records_path = calibration.request.directory + "/layers.jsonl";
    summary_.already_recorded = calibration.already_recorded;
  }

  Expected<CalibrationSummary> run() {
    if (auto dropped = records::drop_unterminated_last_line(summary_.records_path); !dropped) return dropped.error();
    bool in_group = false;
    for (std::size_t next = 0; next < pending_.size(); ++next) {
      if (!in_group || !same_group(pending_[next], group_measurement_)) {
        group_.reset();
        if (auto selected = select_rest(next); !selected) return selected.error();
        if (next >= pending_.size()) break;
        start_group(pending_[next]);
        in_group = true;
      }
      if (auto recorded = measure(next); !recorded) return recorded.error();
    }
    group_.reset();
    summary_.seconds = probe::now_seconds() - calibration_.started_at;
    for (const auto& [group, count] : skipped_by_group_)
      summary_.skipped_lines.push_back(group + ": " + std::to_string(count) + " measurement(s) skipped (over the " +
                                       std::to_string(std::lround(calibration_.request.budget_seconds)) + " s budget)");
    return summary_;
  }

 private:
  double left() const { return deadline_ - probe::now_seconds(); }
  double corrected(const PlannedMeasurement& measurement) const { return correction_.corrected(measurement); }

  // Selects pending_[next..] again with corrected estimates; what no longer fits is recorded as
  // skipped and taken off.
  Expected<void> select_rest(std::size_t next) {
    const std::vector<PlannedMeasurement> rest(pending_.begin() + static_cast<long>(next), pending_.end());
    double total = 0;
    std::size_t groups = 0;
    for (std::size_t index = 0; index < rest.size(); ++index) {
      total += corrected(rest[index]);
      if (index == 0 || !same_group(rest[index], rest[index - 1])) ++groups;
    }
    const double start_costs = static_cast<double>(groups) * worker_start_seconds_;
    if (total + start_costs <= left()) return {};
    std::vector<PlannedMeasurement> kept = select_within_budget(
        rest, left() - start_costs, [&](const auto& measurement) { return corrected(measurement); });
    order_for_running(kept, calibration_.plan_request.settings);
    std::set<std::string> kept_keys;
    for (const auto& measurement : kept) kept_keys.insert(key(measurement));
    for (const auto& measurement : rest)
      if (!kept_keys.count(key(measurement)))
        if (auto recorded = record_skipped(measurement); !recorded) return recorded.error();
    pending_.resize(next);
    pending_.insert(pending_.end(), kept.begin(), kept.end());
    return {};
  }

  std::string key(const PlannedMeasurement& measurement) const {
    return records::measurement_key(
        planned_record(measurement, calibration_.fingerprint, calibration_.request.allocator));
  }

  // Starts the workers of `measurement`'s backend and setting (and runs the backend's numerical
  // check the first time); when they cannot start, group_error_ says why.
  void start_group(const PlannedMeasurement& measurement) {
    group_measurement_ = measurement;
    group_error_.clear();
    const double started = probe::now_seconds();
    auto cpu_sets = cpu_sets_for(measurement.setting, calibration_.usable_cores);
    if (!cpu_sets) {
      group_error_ = cpu_sets.error().message;
      return;
    }
    planned_cpu_sets_ = *cpu_sets;
    auto group =
        WorkerGroup::start({calibration_.request.executable, measurement.backend, measurement.setting, *cpu_sets});
    if (!group) {
      group_error_ = group.error().message;
      return;
    }
    group_ = std::move(*group);
    if (hooks_.workers_started) hooks_.workers_started(group_->pids());
    worker_start_seconds_ = probe::now_seconds() - started;
    if (!checked_.insert(measurement.backend).second) return;
    auto results = group_->check(std::max(0.0, left()));
    if (!results) {
      summary_.check_lines.push_back(measurement.backend + ": " + results.error().message);
      group_.reset();
      group_error_ = results.error().message;
      return;
    }
    summarise_check(measurement.backend, *results);
  }

  void summarise_check(const std::string& backend, const std::vector<CheckResult>& results) {
    int passed = 0, unimplemented = 0;
    double largest_error = 0;
    std::string failures;
    for (const CheckResult& result : results) {
      if (!result.implemented) {
        ++unimplemented;
      } else if (result.passed) {
        ++passed;
        largest_error = std::max(largest_error, result.relative_error);
      } else {
        failures += "; FAILED " + result.descriptor + " " + workloads::pass_name(result.pass) + ": " + result.reason;
        check_failures_[{backend, result.kind, result.pass}] =
            "the numerical check failed on " + result.descriptor + ": " + result.reason;
      }
    }
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s: %d of %d layer passes match the naive reference (largest relative error %.1e)", backend.c_str(),
                  passed, static_cast<int>(results.size()) - unimplemented, largest_error);
    summary_.check_lines.push_back(
        line + (unimplemented ? ", " + std::to_string(unimplemented) + " unimplemented" : "") + failures);
    if (hooks_.progress) hooks_.progress("numerical check " + summary_.check_lines.back());
  }

  Expected<void> append(records::Measurement record) {
    record.timestamp = records::utc_timestamp_now();
    switch (record.status) {
      case records::MeasurementStatus::ok:
        ++summary_.ok;
        break;
      case records::MeasurementStatus::unimplemented:
        ++summary_.unimplemented;
        break;
      case records::MeasurementStatus::failed:
        ++summary_.failed;
        break;
      case records::MeasurementStatus::skipped:
        ++summary_.skipped;
        break;
    }
    return records::append_measurement(summary_.records_path, record);
  }

  Expected<void> record_skipped(const PlannedMeasurement& measurement) {
    records::Measurement record = planned_record(measurement, calibration_.fingerprint, calibration_.request.allocator);
    record.status = records::MeasurementStatus::skipped;
    record.reason = "over the " + std::to_string(std::lround(calibration_.request.budget_seconds)) + " s budget";
    ++skipped_by_group_[measurement.backend + ", " + to_string(measurement.setting)];
    return append(record);
  }

  // Measures pending_[index] (or records why not) and appends its record.
  Expected<void> measure(std::size_t index) {
    const PlannedMeasurement measurement = pending_[index];
    if (corrected(measurement) > left()) return record_skipped(measurement);
    records::Measurement record = planned_record(measurement, calibration_.fingerprint, calibration_.request.allocator);
    record.cpu_sets = planned_cpu_sets_;
    const auto check_failure = check_failures_.find({measurement.backend, measurement.spec.kind, measurement.pass});
    if (!group_) {
      record.status = records::MeasurementStatus::failed;
      record.reason = group_error_;
    } else if (!measurement.whole_network && check_failure != check_failures_.end()) {
      record.status = records::MeasurementStatus::failed;
      record.reason = check_failure->second;
    } else {
      measure_in_workers(measurement, record);
    }
    if (auto appended = append(record); !appended) return appended.error();
    report(index, measurement, record);
    return {};
  }

  void measure_in_workers(const PlannedMeasurement& measurement, records::Measurement& record) {
    record.backend_version = group_->backend_version();
    record.cpu_sets = group_->cpu_sets();
    WorkItem item;
    item.descriptor = measurement.descriptor;
    item.pass = measurement.pass;
    item.network = measurement.network;
    item.batch = measurement.batch;
    item.precision = measurement.precision.precision;
    item.memory_format = measurement.precision.memory_format;
    if (!measurement.whole_network)
      item.operand_sets =
          operand_sets_for_cold_cache(pass_operands(measurement.spec, measurement.batch, measurement.pass),
                                      measurement.pass, calibration_.speed.last_level_cache_bytes);
    const double started = probe::now_seconds();
    // Whatever would run past the end of the budget is stopped there.
    const GroupOutcome outcome = group_->measure(item, std::max(0.0, left()));
    correction_.add(measurement, probe::now_seconds() - started);
    record.status = outcome.status;
    record.reason = outcome.reason;
    if (outcome.timed_out) {  // stopped by the budget, not broken: --resume measures it
      record.status = records::MeasurementStatus::skipped;
      record.reason =
          "stopped at the end of the " + std::to_string(std::lround(calibration_.request.budget_seconds)) + " s budget";
      ++skipped_by_group_[measurement.backend + ", " + to_string(measurement.setting)];
    }
    if (outcome.status == records::MeasurementStatus::ok) {
      std::vector<double> pooled;
      for (const auto& process : outcome.processes)
        pooled.insert(pooled.end(), process.samples.begin(), process.samples.end());
      const probe::TimingSummary timing = probe::summarize(pooled);
      record.median_seconds = timing.median_seconds;
      record.coefficient_of_variation = timing.coefficient_of_variation;
      record.min_seconds = timing.min_seconds;
      record.max_seconds = timing.max_seconds;
      record.repetitions = timing.repetitions;
    }
    if (outcome.workers_lost) {  // the next measurement gets fresh workers
      group_.reset();
      start_group(measurement);
    }
  }

  void report(std::size_t index, const PlannedMeasurement& measurement, const records::Measurement& record) const {
    if (!hooks_.progress) return;
    double remaining = 0;
    for (std::size_t later = index + 1; later < pending_.size(); ++later) remaining += corrected(pending_[later]);
    char result[200];
    if (record.status == records::MeasurementStatus::ok)
      std::snprintf(result, sizeof result, "%.3f ms (cv %.1f%%, %d runs)", record.median_seconds * 1e3,
                    record.coefficient_of_variation * 100, record.repetitions);
    else
      std::snprintf(result, sizeof result, "%s: %s", to_string(record.status).c_str(), record.reason.c_str());
    char line[600];
    std::snprintf(line, sizeof line, "[%zu/%zu] %s elapsed, ETA %s  %s  %s", index + 1, pending_.size(),
                  duration(probe::now_seconds() - calibration_.started_at).c_str(),
                  duration(std::min(remaining, left())).c_str(), what(measurement).c_str(), result);
    hooks_.progress(line);
  }

  const PreparedCalibration& calibration_;
  const RunHooks& hooks_;
  std::vector<PlannedMeasurement> pending_;
  double deadline_;
  double worker_start_seconds_ = SpeedModel{}.worker_start_seconds;  // the last group's start-up, measured
  CalibrationSummary summary_;
  EstimateCorrection correction_;
  std::unique_ptr<WorkerGroup> group_;
  PlannedMeasurement group_measurement_;
  std::string group_error_;
  std::vector<std::vector<int>> planned_cpu_sets_;
  std::set<std::string> checked_;
  std::map<std::tuple<std::string, workloads::LayerKind, workloads::Pass>, std::string> check_failures_;
  std::map<std::string, int> skipped_by_group_;
};

}  // namespace

Expected<CalibrationSummary> run_calibration(const PreparedCalibration& calibration, const RunHooks& hooks) {
  return CalibrationRun(calibration, hooks).run();
}

}  // namespace dnntune::calibrate
