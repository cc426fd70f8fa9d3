// records/machine_report.cpp — see machine_report.hpp.
#include "records/machine_report.hpp"
#include "common/text_format.hpp"

#include <cstdio>
#include <sstream>

namespace dnntune::records {
namespace {

std::string plural(int count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

std::string figure_text(const Figure& figure, const std::string& unit) {
  std::string text = format_fixed(figure.value, 1) + " " + unit + " (" + to_string(figure.provenance);
  if (figure.provenance == Provenance::measured)
    text += ", median of " + std::to_string(figure.repetitions) + ", cv " +
            format_fixed(100 * figure.coefficient_of_variation, 1) + "%";
  if (!figure.note.empty()) text += "; " + figure.note;
  return text + ")";
}

void write_topology(std::ostringstream& out, const Topology& topology) {
  out << "Topology  " << plural(topology.packages, "package") << ", " << plural(topology.numa_nodes, "NUMA node")
      << ", " << plural(topology.cores, "core") << " (" << topology.cores_per_package << " per package), "
      << plural(topology.pus, "PU") << " (SMT " << topology.pus_per_core << ")";
  if (topology.memory_bytes) out << ", " << format_bytes(topology.memory_bytes) << " memory";
  out << "\n";
  if (topology.offline_pus > 0) out << "          " << plural(topology.offline_pus, "PU") << " offline\n";
  for (const NumaNode& node : topology.numa_list) {
    out << "  NUMA node " << node.os_index << ": package " << node.package << ", " << plural(node.cores, "core");
    if (node.memory_bytes) out << ", " << format_bytes(node.memory_bytes);
    if (!node.kind.empty()) out << " (" << node.kind << ")";
    out << "\n";
  }
  if (!topology.caches.empty()) {
    out << "  caches:";
    for (const CacheLevel& cache : topology.caches)
      out << "  L" << cache.level << (cache.type == "data" ? "d" : "") << " " << format_bytes(cache.size_bytes) << " x"
          << cache.instances << " (" << cache.pus_sharing << " PU" << (cache.pus_sharing == 1 ? "" : "s") << " each)";
    out << "\n";
  }
  if (!topology.core_list.empty()) {
    out << "  core -> OS CPUs (SMT siblings):";
    int column = 0;
    for (std::size_t index = 0; index < topology.core_list.size(); ++index) {
      const Core& core = topology.core_list[index];
      if (column++ % 8 == 0) out << "\n   ";
      std::string pus;
      for (int pu : core.pus) pus += (pus.empty() ? "" : ",") + std::to_string(pu);
      out << " " << index << ":" << pus;
    }
    out << "\n";
  }
}

void write_binding(std::ostringstream& out, const Binding& binding) {
  std::string pus;
  for (int pu : binding.allowed_pus) pus += (pus.empty() ? "" : ",") + std::to_string(pu);
  out << "Binding   this process may run on CPUs " << pus << " (" << plural(binding.allowed_cores, "core")
      << "); OpenMP threads " << binding.openmp_threads;
  if (!binding.omp_num_threads_env.empty()) out << " (OMP_NUM_THREADS=" << binding.omp_num_threads_env << ")";
  if (!binding.launcher.empty()) out << "; launched by " << binding.launcher;
  out << "\n";
  for (const std::string& warning : binding.warnings) out << "  warning: " << warning << "\n";
}

void write_scaling(std::ostringstream& out, const std::vector<ScalingPoint>& points, const std::string& unit) {
  out << "    cores threads smt  " << unit << "  per core    cv\n";
  for (const ScalingPoint& point : points) {
    char line[128];
    std::snprintf(line, sizeof line, "    %5d %7d %-4s %8.1f  %8.1f  %4.1f%%\n", point.cores, point.threads,
                  point.smt ? "yes" : "no", point.median, point.median / point.cores,
                  100 * point.coefficient_of_variation);
    out << line;
  }
}

void write_performance(std::ostringstream& out, const Performance& performance) {
  if (performance.peak_fp32_gflops_per_core)
    out << "Peak fp32 per core   " << figure_text(*performance.peak_fp32_gflops_per_core, "GFLOP/s") << "\n";
  if (performance.memory_bandwidth_gbs_per_package)
    out << "Memory bandwidth     " << figure_text(*performance.memory_bandwidth_gbs_per_package, "GB/s per package")
        << "\n";
  if (performance.gemm_gflops_one_core) {
    out << "oneDNN sgemm 1 core  " << figure_text(*performance.gemm_gflops_one_core, "GFLOP/s");
    if (performance.peak_fp32_gflops_per_core && performance.peak_fp32_gflops_per_core->value > 0)
      out << ", "
          << format_fixed(100 * performance.gemm_gflops_one_core->value / performance.peak_fp32_gflops_per_core->value,
                          0)
          << "% of the FMA peak";
    out << "\n";
  }
  // The notes say which: one thread, every core at once, transparent huge pages.
  for (const auto* figure : {&performance.first_touch_ns_per_page, &performance.first_touch_ns_per_page_all_cores,
                             &performance.first_touch_ns_per_page_huge})
    if (*figure) out << "First touch, 4 KiB   " << figure_text(**figure, "ns per page") << "\n";
  if (!performance.fma_scaling.empty()) {
    out << "  FMA peak over cores (" << performance.fma_vector_isa << ", GFLOP/s, median):\n";
    write_scaling(out, performance.fma_scaling, "GFLOP/s");
  }
  if (!performance.triad_scaling.empty()) {
    out << "  STREAM triad over cores (GB/s, median):\n";
    write_scaling(out, performance.triad_scaling, "   GB/s");
  }
}

}  // namespace

std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) value /= 1024, ++unit;
  return (value == static_cast<std::uint64_t>(value) ? std::to_string(static_cast<std::uint64_t>(value))
                                                     : format_fixed(value, 1)) +
         " " + units[unit];
}

std::string machine_report_text(const MachineProfile& profile) {
  std::ostringstream out;
  out << "Machine   " << profile.name << " — " << profile.description << "\n";
  out << "          " << to_string(profile.kind) << ", from " << to_string(profile.origin) << ", fingerprint "
      << fingerprint(profile) << "\n";
  if (profile.kind == MachineKind::cpu_node) {
    out << "CPU       " << (profile.cpu.model.empty() ? "(model unknown)" : profile.cpu.model) << "\n";
    if (!profile.cpu.isa.empty()) {
      out << "  ISA:";
      for (const auto& feature : profile.cpu.isa) out << " " << feature;
      if (!profile.cpu.onednn_isa.empty()) out << "; oneDNN dispatches " << profile.cpu.onednn_isa;
      out << "\n";
    }
    if (profile.cpu.base_ghz) out << "  base clock " << figure_text(*profile.cpu.base_ghz, "GHz") << "\n";
    if (profile.cpu.max_ghz) out << "  max clock  " << figure_text(*profile.cpu.max_ghz, "GHz") << "\n";
    write_topology(out, profile.topology);
  }
  if (profile.binding) write_binding(out, *profile.binding);
  if (profile.gpu) {
    out << "GPU       " << profile.gpu->model << ", " << format_bytes(profile.gpu->memory_bytes) << "\n";
    out << "  fp32 peak        " << figure_text(profile.gpu->fp32_tflops, "TFLOP/s") << "\n";
    out << "  memory bandwidth " << figure_text(profile.gpu->memory_bandwidth_gbs, "GB/s") << "\n";
  }
  write_performance(out, profile.performance);
  if (profile.origin == ProfileOrigin::topology_file)
    out << "Peaks     not measured: this profile describes another machine's topology\n";
  for (const auto& source : profile.sources) out << "Source    " << source << "\n";
  return out.str();
}

}  // namespace dnntune::records
