// tests/calibrate_runner_test.cpp — whole calibrations of a few small layers: failures are recorded
// and the run goes on, a resumed run measures only what is missing.
#include <catch2/catch.hpp>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "calibrate/runner.hpp"
#include "tests/cli_support.hpp"

using namespace dnntune;
using namespace dnntune::calibrate;
using records::MeasurementStatus;

namespace {

// A fresh directory with this machine's profile in it, its peaks stated, not measured.
std::string calibration_directory() {
  const std::string directory = test::make_temporary_directory();
  test::write_machine_profile_with_stated_peaks(directory);
  return directory;
}

CalibrationRequest small_request(std::vector<std::string> layers, std::vector<std::string> backends) {
  CalibrationRequest request;
  request.layers = std::move(layers);
  request.backends = std::move(backends);
  request.batches = {4};
  request.passes = {"forward"};
  request.threads = {1};
  request.processes = {1};
  request.budget_seconds = 120;
  request.directory = calibration_directory();
  request.executable = DNNTUNE_BINARY;
  return request;
}

std::vector<records::Measurement> records_in(const std::string& directory) {
  const auto file = records::read_measurements(directory + "/layers.jsonl");
  REQUIRE(file);
  return file->records;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("a failing or unimplemented kernel is recorded and the run goes on", "[layers][runner]") {
  // 2^36 activations per image (1 TiB at batch 4): the allocation fails (where the kernel
  // overcommits memory, the worker dies instead), a real failure of the backend either way.
  const std::string too_large = "relu:ic65536ih1024iw1024";
  const std::string uneven_bins = "adaptavgpool:ic8ih7iw7oh3ow3";  // oneDNN has no kernel for it
  auto request =
      small_request({"relu:ic8ih8iw8", too_large, uneven_bins, "conv:ic8ih8iw8oc8kh3kw3sh1ph1"}, {"onednn", "torch"});
  // The huge layer's estimate (hundreds of seconds, more where the probed bandwidth is lower) must
  // fit the budget, or the plan drops it unrecorded; it fails at once, so the budget is never spent.
  request.budget_seconds = 1e6;
  const auto calibration = prepare_calibration(request, {});
  REQUIRE(calibration);
  const auto summary = run_calibration(*calibration, {});
  REQUIRE(summary);
  std::map<std::pair<std::string, std::string>, records::Measurement> by_layer;
  std::string listing;
  for (const auto& record : records_in(request.directory)) {
    by_layer[{record.backend, record.descriptor}] = record;
    listing += records::to_json_line(record) + "\n";
  }
  INFO(listing);
  REQUIRE(by_layer.size() == 8);
  for (const std::string backend : {"onednn", "torch"}) {
    INFO(backend);
    const auto& failed = by_layer.at({backend, too_large});
    CHECK(failed.status == MeasurementStatus::failed);
    CHECK_FALSE(failed.reason.empty());
    CHECK(by_layer.at({backend, "relu:ic8ih8iw8"}).status == MeasurementStatus::ok);
    CHECK(by_layer.at({backend, "conv:ic8ih8iw8oc8kh3kw3sh1ph1"}).status == MeasurementStatus::ok);
  }
  CHECK(by_layer.at({"onednn", uneven_bins}).status == MeasurementStatus::unimplemented);
  CHECK(by_layer.at({"torch", uneven_bins}).status == MeasurementStatus::ok);
  CHECK(summary->failed == 2);
  CHECK(summary->unimplemented == 1);
  for (const auto& [key, record] : by_layer) {
    CHECK(record.cpu_sets.size() == 1);
    CHECK(record.command.find("--layer " + record.descriptor) != std::string::npos);
    if (record.status == MeasurementStatus::ok) CHECK(record.repetitions >= 3);
  }
  std::filesystem::remove_all(request.directory);
}

TEST_CASE("a worker killed mid-run fails one measurement, its replacement does the rest", "[layers][runner]") {
  if (std::thread::hardware_concurrency() < 2) {
    WARN("needs 2 cores for two settings");
    return;
  }
  auto request = small_request({"relu:ic8ih8iw8", "relu:ic16ih8iw8", "relu:ic32ih8iw8"}, {"torch"});
  request.threads = {1, 2};  // two groups of workers: the first runs the numerical check
  const auto calibration = prepare_calibration(request, {});
  REQUIRE(calibration);
  int groups = 0;
  RunHooks hooks;
  hooks.workers_started = [&](const std::vector<pid_t>& pids) {
    if (++groups == 2) kill(pids.front(), SIGKILL);  // the second group, before its first measurement
  };
  const auto summary = run_calibration(*calibration, hooks);
  REQUIRE(summary);
  const auto records = records_in(request.directory);
  REQUIRE(records.size() == 6);
  int failed = 0;
  for (const auto& record : records) {
    if (record.status == MeasurementStatus::failed) {
      ++failed;
      CHECK_THAT(record.reason, Catch::Contains("killed by signal 9"));
    } else {
      CHECK(record.status == MeasurementStatus::ok);
    }
  }
  CHECK(failed == 1);
  CHECK(groups == 3);  // the killed group was replaced
  std::filesystem::remove_all(request.directory);
}

TEST_CASE("resume after an interrupted run re-measures nothing already recorded", "[layers][runner]") {
  auto request = small_request(
      {"relu:ic8ih8iw8", "relu:ic16ih8iw8", "bnorm:ic8ih8iw8", "maxpool:ic8ih8iw8kh2kw2sh2ph0"}, {"torch"});
  const auto first = prepare_calibration(request, {});
  REQUIRE(first);
  REQUIRE(run_calibration(*first, {}));
  const std::string path = request.directory + "/layers.jsonl";
  const auto complete = lines_of(path);
  REQUIRE(complete.size() == 4);

  // As if killed while writing the third record: two whole lines and half of the third.
  {
    std::ofstream out(path, std::ios::trunc);
    out << complete[0] << "\n" << complete[1] << "\n" << complete[2].substr(0, complete[2].size() / 2);
  }
  request.resume = false;
  CHECK_FALSE(prepare_calibration(request, {}));  // records there: --resume or another directory
  request.resume = true;
  const auto resumed = prepare_calibration(request, {});
  REQUIRE(resumed);
  CHECK(resumed->already_recorded == 2);
  CHECK(resumed->plan.measurements.size() == 2);
  const auto summary = run_calibration(*resumed, {});
  REQUIRE(summary);
  CHECK(summary->ok == 2);

  const auto after = lines_of(path);
  REQUIRE(after.size() == 4);
  CHECK(after[0] == complete[0]);  // untouched, not measured again
  CHECK(after[1] == complete[1]);
  std::set<std::string> keys;
  for (const auto& record : records_in(request.directory)) CHECK(keys.insert(records::measurement_key(record)).second);
  CHECK(keys.size() == 4);

  // Nothing left: a second resume measures nothing.
  const auto again = prepare_calibration(request, {});
  REQUIRE(again);
  CHECK(again->plan.measurements.empty());
  CHECK(again->already_recorded == 4);
  std::filesystem::remove_all(request.directory);
}
