// cli/probe_command.cpp — `dnntune probe`: characterise this node (topology, binding, measured
// peaks), another node from an hwloc XML export, or a built-in spec profile.
#include <algorithm>
#include <iostream>

#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/option_table.hpp"
#include "common/progress.hpp"
#include "probe/allocators.hpp"
#include "data/builtin_machines.hpp"
#include "records/machine_report.hpp"
#include "probe/peak_kernels.hpp"
#include "probe/timing.hpp"
#include "probe/topology.hpp"

namespace dnntune::cli {
namespace {

struct ProbeOptions {
  bool quick = false;
  std::string topology_file;
  std::string machine;
  OutputOptions output;
};

void run_probe(const ProbeOptions& options) {
  const double start = probe::now_seconds();
  records::MachineProfile profile;
  if (!options.machine.empty()) {
    profile = value_or_fail(data::load_machine(options.machine));
  } else if (!options.topology_file.empty()) {
    profile = value_or_fail(probe::describe_topology_file(options.topology_file));
  } else {
    profile = value_or_fail(probe::describe_this_machine());
    if (!options.quick) {
      probe::PeakOptions peak_options;
      peak_options.progress = [print = progress_printer("probe")](const std::string& step) {
        print("measuring " + step);
      };
      ok_or_fail(probe::measure_node_performance(profile, peak_options));
    }
  }
  std::string text = options.output.json ? records::to_json_text(profile) : records::machine_report_text(profile);
  if (!options.output.json && options.machine.empty() && options.topology_file.empty()) {
    // What a launch line can load on this machine (recommend --allocator NAME).
    text += "Allocators\n";
    for (const auto& variant : probe::installed_allocators()) {
      std::string how;
      for (const auto& [name, value] : variant.environment) how += (how.empty() ? "" : " ") + name + "=" + value;
      text += "  " + variant.name + std::string(std::max<std::size_t>(1, 13 - variant.name.size()), ' ') +
              variant.description + (how.empty() ? "" : "; load with " + how) + "\n";
    }
  }
  if (!options.output.json && options.machine.empty() && options.topology_file.empty())
    text += "Probe took " + std::to_string(probe::now_seconds() - start).substr(0, 4) + " s" +
            (options.quick ? " (--quick: nothing measured)" : "") + "\n";
  write_output(text, options.output.path);
}

}  // namespace

void add_probe_command(CLI::App& root) {
  static ProbeOptions options;
  CLI::App* command = root.add_subcommand(
      "probe",
      "Characterise a node: packages, NUMA, cores, SMT siblings, caches, the CPUs this process may use, "
      "and measured peak FMA GFLOP/s and memory bandwidth over cores (about 20 s at most).");
  add_flag(*command, option_rows::quick, options.quick);
  auto* topology = add_value(*command, option_rows::topology, options.topology_file);
  add_value(*command, option_rows::machine, options.machine)->excludes(topology);
  add_output_options(*command, options.output);
  command->callback([] { run_probe(options); });
}

}  // namespace dnntune::cli
