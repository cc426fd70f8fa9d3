// cli/machines_command.cpp — `dnntune machines`: the built-in spec profiles, a line each.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "common/json_file.hpp"
#include "data/builtin_machines.hpp"

namespace dnntune::cli {
namespace {

void run_machines(const OutputOptions& output) {
  std::string text;
  nlohmann::json list = nlohmann::json::array();
  char line[256];
  std::snprintf(line, sizeof line, "%-22s %-8s %6s %5s %14s %12s  %s\n", "name", "kind", "cores", "SMT", "fp32 GFLOP/s",
                "mem GB/s", "description");
  text += line;
  for (const auto& name : data::builtin_machine_names()) {
    const auto profile = value_or_fail(data::builtin_machine(name));
    double peak_gflops = 0, bandwidth_gbs = 0;
    if (profile.gpu) {
      peak_gflops = profile.gpu->fp32_tflops.value * 1000;
      bandwidth_gbs = profile.gpu->memory_bandwidth_gbs.value;
    } else {
      if (profile.performance.peak_fp32_gflops_per_core)
        peak_gflops = profile.performance.peak_fp32_gflops_per_core->value * profile.topology.cores;
      if (profile.performance.memory_bandwidth_gbs_per_package)
        bandwidth_gbs = profile.performance.memory_bandwidth_gbs_per_package->value * profile.topology.packages;
    }
    const bool gpu = profile.kind == records::MachineKind::gpu;
    std::snprintf(line, sizeof line, "%-22s %-8s %6s %5s %14.0f %12.0f  %s\n", name.c_str(), gpu ? "gpu" : "cpu-node",
                  gpu ? "-" : std::to_string(profile.topology.cores).c_str(),
                  gpu ? "-" : std::to_string(profile.topology.pus_per_core).c_str(), peak_gflops, bandwidth_gbs,
                  profile.description.c_str());
    text += line;
    list.push_back({{"name", name},
                    {"kind", records::to_string(profile.kind)},
                    {"description", profile.description},
                    {"cores", profile.topology.cores},
                    {"pus_per_core", profile.topology.pus_per_core},
                    {"peak_fp32_gflops", peak_gflops},
                    {"memory_bandwidth_gbs", bandwidth_gbs},
                    {"fingerprint", records::fingerprint(profile)}});
  }
  text +=
      "Figures are per node (CPU: all cores at base clock; all packages) from spec sheets. "
      "Details: dnntune probe --machine NAME\n";
  auto document = schema_head("dnntune.machine-list", 1);
  document["machines"] = list;
  write_output(output.json ? document.dump(2) + "\n" : text, output.path);
}

}  // namespace

void add_machines_command(CLI::App& root) {
  static OutputOptions output;
  CLI::App* command =
      root.add_subcommand("machines", "List the built-in spec-sheet machine profiles (use with --machine NAME).");
  add_output_options(*command, output);
  command->callback([] { run_machines(output); });
}

}  // namespace dnntune::cli
