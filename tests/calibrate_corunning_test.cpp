// tests/calibrate_corunning_test.cpp — co-running worker processes: disjoint CPU sets, timed
// intervals that really overlap, and a worker killed by a signal failing only its measurement.
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <set>

#include "calibrate/corunning.hpp"
#include "calibrate/runner.hpp"
#include "calibrate/worker.hpp"
#include "probe/topology.hpp"

using namespace dnntune;
using namespace dnntune::calibrate;

namespace {

std::vector<std::vector<int>> this_machines_cores() {
  const auto machine = probe::describe_this_machine();
  REQUIRE(machine);
  return usable_cores(*machine);
}

WorkItem small_relu() {
  WorkItem item;
  item.descriptor = "relu:ic64ih56iw56";
  item.pass = workloads::Pass::forward;
  item.batch = 8;
  item.operand_sets = 2;
  return item;
}

}  // namespace

TEST_CASE("co-running processes get disjoint cores, SMT siblings when asked", "[layers][corunning]") {
  const std::vector<std::vector<int>> cores{{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  const auto two_by_two = cpu_sets_for({2, false, 2}, cores);
  REQUIRE(two_by_two);
  CHECK(*two_by_two == std::vector<std::vector<int>>{{0, 1}, {2, 3}});
  const auto siblings = cpu_sets_for({4, true, 2}, cores);
  REQUIRE(siblings);
  CHECK(*siblings == std::vector<std::vector<int>>{{0, 4, 1, 5}, {2, 6, 3, 7}});
  CHECK_FALSE(cpu_sets_for({3, false, 2}, cores));      // 6 cores needed
  CHECK_FALSE(cpu_sets_for({2, true, 1}, {{0}, {1}}));  // no SMT siblings
}

TEST_CASE("co-running workers time together on their own CPUs", "[layers][corunning]") {
  const auto cores = this_machines_cores();
  if (cores.size() < 2) {
    WARN("needs 2 cores to co-run");
    return;
  }
  const Setting setting{1, false, 2};
  const auto cpu_sets = cpu_sets_for(setting, cores);
  REQUIRE(cpu_sets);
  auto group = WorkerGroup::start({DNNTUNE_BINARY, "torch", setting, *cpu_sets});
  REQUIRE(group);
  CHECK((*group)->cpu_sets() == *cpu_sets);  // what each process reported from inside

  for (int round = 0; round < 2; ++round) {
    const GroupOutcome outcome = (*group)->measure(small_relu(), 60);
    REQUIRE(outcome.status == records::MeasurementStatus::ok);
    REQUIRE(outcome.processes.size() == 2);
    std::set<int> seen;
    double latest_start = 0, earliest_end = 1e300;
    for (const auto& process : outcome.processes) {
      CHECK(process.samples.size() >= 3);
      for (const int cpu : process.cpus) CHECK(seen.insert(cpu).second);  // disjoint
      latest_start = std::max(latest_start, process.start);
      earliest_end = std::min(earliest_end, process.end);
    }
    CHECK(latest_start < earliest_end);  // the timed intervals intersect
  }
}

TEST_CASE("a worker killed by a signal fails only the measurement it was on", "[layers][corunning]") {
  const auto cores = this_machines_cores();
  const Setting setting{1, false, 1};
  const auto cpu_sets = cpu_sets_for(setting, cores);
  REQUIRE(cpu_sets);
  auto group = WorkerGroup::start({DNNTUNE_BINARY, "onednn", setting, *cpu_sets});
  REQUIRE(group);
  kill((*group)->pids().front(), SIGKILL);
  const GroupOutcome lost = (*group)->measure(small_relu(), 60);
  CHECK(lost.status == records::MeasurementStatus::failed);
  CHECK(lost.workers_lost);
  CHECK_THAT(lost.reason, Catch::Contains("killed by signal 9"));

  auto fresh = WorkerGroup::start({DNNTUNE_BINARY, "onednn", setting, *cpu_sets});
  REQUIRE(fresh);
  CHECK((*fresh)->measure(small_relu(), 60).status == records::MeasurementStatus::ok);
}

TEST_CASE("a calibrate worker is started through its one builder", "[worker]") {
  dnntune::calibrate::WorkerOptions options;
  options.backend = "onednn";
  options.threads = 2;
  CHECK(dnntune::calibrate::calibrate_worker_argv("/bin/dnntune", options) ==
        std::vector<std::string>{"/bin/dnntune", "calibrate", "--worker", "--backend", "onednn", "--threads", "2"});
  options.keep_loading = true;
  CHECK(dnntune::calibrate::calibrate_worker_argv("/bin/dnntune", options).back() == "--keep-loading");
}
