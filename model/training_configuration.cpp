// model/training_configuration.cpp — see training_configuration.hpp.
#include "model/training_configuration.hpp"

#include <algorithm>

namespace dnntune::model {

bool operator==(const TrainingConfiguration& a, const TrainingConfiguration& b) {
  return a.batch_per_process == b.batch_per_process && a.processes_per_node == b.processes_per_node &&
         a.threads_per_process == b.threads_per_process && a.smt == b.smt && a.nodes == b.nodes &&
         a.scheme == b.scheme && a.parameter_servers == b.parameter_servers && a.asynchronous == b.asynchronous &&
         a.fusion_bytes == b.fusion_bytes && a.fabric == b.fabric;
}

Expected<Placement> place(const TrainingConfiguration& configuration, const MachineRates& rates) {
  const int ppn = configuration.processes_per_node, threads = configuration.threads_per_process;
  if (configuration.batch_per_process < 1) return bad_input("the batch per process must be at least 1");
  if (ppn < 1 || threads < 1 || configuration.nodes < 1)
    return bad_input("processes per node, threads per process and nodes must be at least 1");
  if (configuration.smt && rates.pus_per_core < 2)
    return bad_input("SMT requested, but this machine has 1 hardware thread per core");
  const int hardware_threads_per_core = configuration.smt ? rates.pus_per_core : 1;
  const int cores_per_process = (threads + hardware_threads_per_core - 1) / hardware_threads_per_core;
  const int cores_needed = cores_per_process * ppn;
  if (cores_needed > rates.cores()) {
    // More processes than cores: no thread count fits, so say how many processes do.
    const std::string what_fits = rates.cores() / ppn > 0
                                      ? std::to_string(rates.cores() / ppn) + " threads per process would fit"
                                      : "at most " + std::to_string(rates.cores()) + " processes of 1 thread fit";
    return bad_input(std::to_string(ppn) + " processes x " + std::to_string(threads) + " threads need " +
                     std::to_string(cores_needed) + " cores" + (configuration.smt ? " (with SMT)" : "") +
                     ", the node has " + std::to_string(rates.cores()) + " (" + what_fits +
                     (rates.pus_per_core > 1 && !configuration.smt ? ", or turn SMT on" : "") + ")");
  }
  if (configuration.scheme == CommunicationScheme::parameter_server) {
    const int ranks = ppn * configuration.nodes;
    if (configuration.parameter_servers < 1 || configuration.parameter_servers >= ranks)
      return bad_input("a parameter server needs 1 to " + std::to_string(ranks - 1) + " servers among " +
                       std::to_string(ranks) + " ranks (got " + std::to_string(configuration.parameter_servers) + ")");
  }
  if (configuration.fusion_bytes <= 0) return bad_input("the fusion threshold must be positive");
  Placement placement;
  placement.cores_per_process = cores_per_process;
  placement.packages_spanned = std::max(1, (cores_per_process + rates.cores_per_package - 1) / rates.cores_per_package);
  if (placement.packages_spanned > 1) {
    // A process wider than a package takes whole packages: no other process may share them.
    if (ppn * placement.packages_spanned > rates.packages)
      return bad_input(std::to_string(ppn) + " processes of " + std::to_string(cores_per_process) +
                       " cores each would share a socket with a process that spans sockets");
    placement.processes_per_package = 1;
    return placement;
  }
  // Processes never straddle two sockets: each package holds whole processes.
  const int per_package_capacity = rates.cores_per_package / cores_per_process;
  if (ppn > rates.packages * per_package_capacity)
    return bad_input(std::to_string(ppn) + " processes of " + std::to_string(cores_per_process) +
                     " cores would straddle sockets (a socket of " + std::to_string(rates.cores_per_package) +
                     " cores holds " + std::to_string(per_package_capacity) + " of them)");
  placement.processes_per_package = (ppn + rates.packages - 1) / rates.packages;
  return placement;
}

std::string describe(const TrainingConfiguration& configuration) {
  const int threads = configuration.threads_per_process;
  std::string text = std::to_string(configuration.processes_per_node) + " ppn x " + std::to_string(threads) +
                     (threads == 1 ? " thread" : " threads") + ", SMT " + (configuration.smt ? "on" : "off") +
                     ", batch " + std::to_string(configuration.batch_per_process) + "/process";
  if (configuration.nodes > 1)
    text += ", " + std::to_string(configuration.nodes) + " nodes (" + configuration.fabric + ")";
  if (configuration.scheme == CommunicationScheme::parameter_server)
    text += ", parameter server x" + std::to_string(configuration.parameter_servers) +
            (configuration.asynchronous ? " async" : " sync");
  return text;
}

}  // namespace dnntune::model
