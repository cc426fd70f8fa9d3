// train/launch.cpp — see launch.hpp.
#include "train/launch.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

#include "common/mpirun_line.hpp"

extern char** environ;

namespace dnntune::train {

Expected<LaunchPlan> plan_mpirun_launch(const LaunchRequest& request, const records::Topology& node, bool as_root) {
  if (request.processes_per_node < 1) return bad_input("--ppn must be at least 1");
  if (request.threads < 1) return bad_input("--threads must be at least 1 to launch (one per process at least)");
  if (request.nodes < 1) return bad_input("--nodes must be at least 1");
  if (request.program.empty()) return bad_input("nothing to launch");
  MpirunRequest line_request;
  line_request.ranks_per_node = request.processes_per_node;
  line_request.nodes = request.nodes;
  line_request.cpus_per_rank = request.threads;
  line_request.cores = node.cores;
  line_request.pus = node.pus;
  line_request.packages = node.packages;
  line_request.cores_per_package = node.cores_per_package;
  line_request.pus_per_core = node.pus_per_core;
  line_request.hostfile = request.hostfile;
  line_request.as_root = as_root;
  line_request.environment = {{"OMP_NUM_THREADS", std::to_string(request.threads)}};
  MpirunLine line = mpirun_line(line_request);
  LaunchPlan plan{std::move(line.argv), std::move(line.notes)};
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

}  // namespace dnntune::train
