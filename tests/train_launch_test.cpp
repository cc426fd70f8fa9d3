// tests/train_launch_test.cpp — the mpirun line the launch helper composes: ranks mapped per
// socket with their cores (PE=threads) and bound to them, SMT siblings used only when cores run
// out, no binding (and a note) when even the CPUs do; arguments quoted for a shell.
#include <catch2/catch.hpp>

#include <algorithm>

#include "common/shell_words.hpp"
#include "train/launch.hpp"

using dnntune::shell_command_line;
using dnntune::records::Topology;
using dnntune::train::LaunchRequest;
using dnntune::train::plan_mpirun_launch;

namespace {

Topology node(int packages, int cores_per_package, int pus_per_core) {
  Topology topology;
  topology.packages = packages;
  topology.cores = packages * cores_per_package;
  topology.cores_per_package = cores_per_package;
  topology.pus_per_core = pus_per_core;
  topology.pus = topology.cores * pus_per_core;
  return topology;
}

LaunchRequest request(int ppn, int threads, int nodes = 1) {
  LaunchRequest launch;
  launch.processes_per_node = ppn;
  launch.threads = threads;
  launch.nodes = nodes;
  launch.program = {"/opt/dnntune", "train", "--model", "resnet50"};
  return launch;
}

bool has(const std::vector<std::string>& argv, const std::string& argument) {
  return std::find(argv.begin(), argv.end(), argument) != argv.end();
}

}  // namespace

TEST_CASE("ranks per socket with their cores, bound to them") {
  const auto plan = plan_mpirun_launch(request(4, 14, 2), node(2, 28, 2), false);
  REQUIRE(plan);
  CHECK(shell_command_line(plan->argv) ==
        "mpirun -np 8 --map-by ppr:2:socket:PE=14 --bind-to core -x OMP_NUM_THREADS=14 "
        "/opt/dnntune train --model resnet50");
  CHECK(plan->notes.empty());
}

TEST_CASE("ranks that do not split evenly over sockets fill them in turn without straddling") {
  // 3 ranks of 2 cores on 2 x 4 cores: 2 on the first socket, 1 on the second (as the tuner's
  // ppr:2:socket line places them); packed per node, the third would start on core 4 anyway,
  // but 3 ranks of 12 on 2 x 28 would straddle (cores 24-35).
  const auto plan = plan_mpirun_launch(request(3, 2), node(2, 4, 1), false);
  REQUIRE(plan);
  CHECK(has(plan->argv, "ppr:2:socket:PE=2"));
  CHECK_FALSE(has(plan->argv, "--oversubscribe"));
  CHECK(has(plan_mpirun_launch(request(3, 12), node(2, 28, 1), false)->argv, "ppr:2:socket:PE=12"));
  // 2 ranks of 3 cores do not fit a 5-core socket: packed over the node's cores in order.
  CHECK(has(plan_mpirun_launch(request(3, 3), node(2, 5, 1), false)->argv, "ppr:3:node:PE=3"));
}

TEST_CASE("SMT siblings count as CPUs only when the cores run out") {
  const auto plan = plan_mpirun_launch(request(2, 2), node(1, 2, 2), false);
  REQUIRE(plan);
  CHECK(has(plan->argv, "--use-hwthread-cpus"));
  CHECK(has(plan->argv, "hwthread"));
  REQUIRE(plan->notes.size() == 1);
  CHECK(plan->notes.front().find("SMT") != std::string::npos);
}

TEST_CASE("more threads than CPUs: unbound, oversubscribed, and said so") {
  const auto plan = plan_mpirun_launch(request(3, 1), node(1, 2, 1), true);
  REQUIRE(plan);
  CHECK(has(plan->argv, "none"));
  CHECK(has(plan->argv, "--oversubscribe"));
  CHECK(has(plan->argv, "--allow-run-as-root"));
  REQUIRE(plan->notes.size() == 1);
  CHECK(plan->notes.front().find("time-share") != std::string::npos);
}

TEST_CASE("a launch needs at least one process, thread and node") {
  CHECK_FALSE(plan_mpirun_launch(request(0, 1), node(1, 2, 1), false));
  CHECK_FALSE(plan_mpirun_launch(request(1, 0), node(1, 2, 1), false));
  CHECK_FALSE(plan_mpirun_launch(request(1, 1, 0), node(1, 2, 1), false));
}

TEST_CASE("shell quoting keeps every argument whole") {
  CHECK(shell_command_line({"a", "b c", "it's", ""}) == "a 'b c' 'it'\\''s' ''");
}
