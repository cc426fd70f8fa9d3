// records/record_bounds.cpp — see record_bounds.hpp.
#include "records/record_bounds.hpp"

#include <cmath>
#include <cstdio>

#include "workloads/layer.hpp"

namespace dnntune::records {
namespace {

// "ORIGIN: (field) VALUE is outside LOW..HIGH"
Error outside(const std::string& origin, const std::string& field, const std::string& value, const std::string& range) {
  return bad_input(origin + ": (" + field + ") " + value + " is outside " + range);
}

template <class T>
bool within(T value, T low, T high) {
  return value >= low && value <= high;
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

}  // namespace

Expected<void> check_physical(double value, const PhysicalRange& range, const std::string& origin,
                              const std::string& field) {
  if (range.holds(value)) return {};
  return bad_input(origin + ": (" + field + ") " + number_text(value) + " is outside " + number_text(range.low) + ".." +
                   number_text(range.high) + " " + range.unit + " (what real hardware spans)");
}

Expected<void> check_measurement_bounds(const Measurement& m, const std::string& origin) {
  const std::pair<const char*, int> counts[] = {{"threads", m.threads}, {"processes", m.processes}, {"nodes", m.nodes}};
  const int highest[] = {max_threads_per_process, max_processes, max_nodes};
  for (std::size_t index = 0; index < std::size(counts); ++index)
    if (!within(counts[index].second, 1, highest[index]))
      return outside(origin, counts[index].first, std::to_string(counts[index].second),
                     "1.." + std::to_string(highest[index]));
  const bool ok = m.status == MeasurementStatus::ok;
  // A layer pass, a training step or a module's pass is timed over a batch; an exchange is not.
  const std::int64_t lowest_batch = ok && m.kind != MeasurementKind::communication ? 1 : 0;
  if (!within(m.batch, lowest_batch, workloads::max_batch))
    return outside(origin, "batch", std::to_string(m.batch),
                   std::to_string(lowest_batch) + ".." + std::to_string(workloads::max_batch));
  if (!within<std::int64_t>(m.message_bytes, 0, static_cast<std::int64_t>(max_record_bytes)))
    return outside(origin, "message_bytes", std::to_string(m.message_bytes), "0..2^52");
  const std::pair<const char*, double> seconds[] = {
      {"median_seconds", m.median_seconds}, {"min_seconds", m.min_seconds}, {"max_seconds", m.max_seconds}};
  for (const auto& [field, value] : seconds)
    if (!(std::isfinite(value) && within(value, 0.0, max_record_seconds)))
      return outside(origin, field, number_text(value), "0..1e6 seconds");
  if (ok && !(m.median_seconds > 0))
    return outside(origin, "median_seconds", number_text(m.median_seconds), "(0, 1e6] seconds for an ok record");
  if (!(std::isfinite(m.coefficient_of_variation) && m.coefficient_of_variation >= 0))
    return outside(origin, "coefficient_of_variation", number_text(m.coefficient_of_variation), "0..inf (finite)");
  if (!within(m.repetitions, ok ? 1 : 0, 1 << 30))
    return outside(origin, "repetitions", std::to_string(m.repetitions), std::string(ok ? "1" : "0") + "..2^30");
  for (const auto& cpus : m.cpu_sets)
    for (const int cpu : cpus)
      if (!within(cpu, 0, 1 << 20)) return outside(origin, "cpu_sets", std::to_string(cpu), "0..2^20");
  return {};
}

Expected<void> check_topology_bounds(const Topology& t, const std::string& origin) {
  if (!within(t.cores, 1, max_node_cores))
    return bad_input(origin + ": (/topology/cores) " + std::to_string(t.cores) + " is outside 1.." +
                     std::to_string(max_node_cores) + " (the most cores per node dnntune searches)");
  if (!within(t.pus, t.cores, max_node_pus))
    return bad_input(origin + ": (/topology/pus) " + std::to_string(t.pus) + " is outside cores.." +
                     std::to_string(max_node_pus) + " (the most hardware threads per node dnntune searches)");
  const std::pair<const char*, int> counts[] = {{"/topology/packages", t.packages},
                                                {"/topology/cores_per_package", t.cores_per_package},
                                                {"/topology/pus_per_core", t.pus_per_core}};
  for (const auto& [field, value] : counts)
    if (!within(value, 1, t.pus)) return outside(origin, field, std::to_string(value), "1..pus");
  if (!within(t.numa_nodes, 0, t.pus))
    return outside(origin, "/topology/numa_nodes", std::to_string(t.numa_nodes), "0..pus");
  if (!within(t.offline_pus, 0, max_node_pus))
    return outside(origin, "/topology/offline_pus", std::to_string(t.offline_pus),
                   "0.." + std::to_string(max_node_pus));
  if (t.memory_bytes > max_record_bytes)
    return outside(origin, "/topology/memory_bytes", std::to_string(t.memory_bytes), "0..2^52");
  // A probe lists every NUMA node it counts; a list that disagrees with the count (none beside
  // numa_nodes 2) places memory on nodes that do not exist.
  if (t.numa_nodes > 1 ? t.numa_list.size() != static_cast<std::size_t>(t.numa_nodes) : t.numa_list.size() > 1)
    return bad_input(origin + ": (/topology/numa_list) lists " + std::to_string(t.numa_list.size()) +
                     " NUMA nodes beside numa_nodes " + std::to_string(t.numa_nodes) + ": the two must agree");
  for (const NumaNode& node : t.numa_list)
    if (node.memory_bytes > max_record_bytes || !within(node.cores, 0, t.cores))
      return bad_input(origin + ": (/topology/numa_list) a NUMA node needs memory_bytes 0..2^52 and cores 0..cores");
  for (const CacheLevel& cache : t.caches)
    if (!within(cache.level, 1, 4) || !within<std::uint64_t>(cache.size_bytes, 1, max_record_bytes) ||
        !within(cache.instances, 1, max_node_pus) || !within(cache.pus_sharing, 0, max_node_pus))
      return bad_input(origin + ": (/topology/caches) a cache needs level 1..4, size_bytes 1..2^52, instances 1.." +
                       std::to_string(max_node_pus) + " and pus_sharing 0.." + std::to_string(max_node_pus));
  return {};
}

}  // namespace dnntune::records
