// probe/train/launch.cpp — see launch.hpp.
#include "probe/train/launch.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/open_mpi_mapping.hpp"

extern char** environ;

namespace dnntune::probe::train {

Expected<LaunchPlan> plan_mpirun_launch(const LaunchRequest& request, const Topology& node, bool as_root) {
  if (request.processes_per_node < 1) return bad_input("--ppn must be at least 1");
  if (request.threads < 1) return bad_input("--threads must be at least 1 to launch (one per process at least)");
  if (request.nodes < 1) return bad_input("--nodes must be at least 1");
  if (request.program.empty()) return bad_input("nothing to launch");
  const int cores = std::max(1, node.cores);
  const int cpus = std::max(cores, node.pus);
  const int packages = std::max(1, node.packages);
  const int ppn = request.processes_per_node;
  const int needed = ppn * request.threads;

  LaunchPlan plan;
  plan.argv = {"mpirun", "-np", std::to_string(ppn * request.nodes)};
  if (!request.hostfile.empty()) plan.argv.insert(plan.argv.end(), {"--hostfile", request.hostfile});
  // Hardware threads count as CPUs to hand out only when the cores alone are too few.
  const int cpus_per_socket = std::max(1, node.cores_per_package) * (needed <= cores ? 1 : std::max(1, node.pus_per_core));
  const std::string map_by = open_mpi_map_by(ppn, request.threads, packages, cpus_per_socket);
  bool oversubscribe = false;
  if (needed <= cores) {
    plan.argv.insert(plan.argv.end(), {"--map-by", map_by, "--bind-to", "core"});
    oversubscribe = ppn > cores;
  } else if (needed <= cpus) {
    // Open MPI counts SMT siblings as the CPUs to hand out only when told to.
    plan.argv.insert(plan.argv.end(), {"--use-hwthread-cpus", "--map-by", map_by, "--bind-to", "hwthread"});
    plan.notes.push_back(std::to_string(ppn) + " processes x " + std::to_string(request.threads) + " threads exceed the node's " +
                         std::to_string(cores) + " cores: threads share cores through SMT siblings");
  } else {
    plan.argv.insert(plan.argv.end(), {"--bind-to", "none"});
    oversubscribe = true;
    plan.notes.push_back(std::to_string(ppn) + " processes x " + std::to_string(request.threads) + " threads exceed the node's " +
                         std::to_string(cpus) + " CPUs: ranks are left unbound and time-share them");
  }
  if (oversubscribe) plan.argv.push_back("--oversubscribe");
  if (as_root) plan.argv.push_back("--allow-run-as-root");
  plan.argv.insert(plan.argv.end(), {"-x", "OMP_NUM_THREADS=" + std::to_string(request.threads)});
  plan.argv.insert(plan.argv.end(), request.program.begin(), request.program.end());
  return plan;
}

Expected<int> run_and_wait(const std::vector<std::string>& argv) {
  if (argv.empty()) return bad_input("nothing to run");
  std::vector<std::string> storage = argv;
  std::vector<char*> pointers;
  for (std::string& argument : storage) pointers.push_back(argument.data());
  pointers.push_back(nullptr);
  pid_t child = 0;
  const int spawned = posix_spawnp(&child, pointers[0], nullptr, nullptr, pointers.data(), environ);
  if (spawned != 0)
    return failure("cannot run " + argv[0] + ": " + std::strerror(spawned) +
                   (argv[0] == "mpirun" ? " (Open MPI's mpirun: apt-get install openmpi-bin)" : ""));
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) return failure("waiting for " + argv[0] + ": " + std::strerror(errno));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace dnntune::probe::train
