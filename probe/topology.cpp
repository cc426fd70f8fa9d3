// probe/topology.cpp — hwloc to MachineProfile (see topology.hpp).
// The topology is loaded with disallowed resources included, so that the machine is described
// whole and the cgroup / affinity limits of this process are reported against it.
#include "probe/topology.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>

#include <hwloc.h>
#include <omp.h>

#include "common/files.hpp"
#include "probe/cpu_features.hpp"
#include "records/record_bounds.hpp"

namespace dnntune::probe {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* topology) const { hwloc_topology_destroy(topology); }
};
using TopologyHandle = std::unique_ptr<hwloc_topology, TopologyDeleter>;

// Loads this machine (xml_path empty) or an XML export. hwloc only prints to stderr on XML
// errors, so the message names the file and points at the usual cause.
Expected<TopologyHandle> load_topology(const std::string& xml_path) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return failure("hwloc: cannot initialise a topology");
  TopologyHandle topology(raw);
  if (!xml_path.empty()) {
    if (auto usable = check_input_file(xml_path); !usable) return usable.error();
    if (hwloc_topology_set_xml(raw, xml_path.c_str()) != 0)
      return bad_input(xml_path + ": hwloc cannot use this file as a topology source");
  }
  hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  if (hwloc_topology_load(raw) != 0)
    return bad_input((xml_path.empty() ? std::string("this machine") : xml_path) +
                     ": hwloc could not load the topology (not an hwloc XML export? "
                     "make one with `lstopo --of xml FILE.xml`)");
  return topology;
}

int package_index_of(hwloc_topology_t topology, hwloc_obj_t object) {
  const hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_PACKAGE, object);
  return package ? static_cast<int>(package->logical_index) : 0;
}

std::vector<int> bitmap_indices(hwloc_const_bitmap_t bitmap) {
  std::vector<int> indices;
  for (int index = hwloc_bitmap_first(bitmap); index >= 0; index = hwloc_bitmap_next(bitmap, index))
    indices.push_back(index);
  return indices;
}

std::vector<records::Core> read_cores(hwloc_topology_t topology) {
  std::vector<records::Core> cores;
  const int core_count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  // A topology without Core objects (some exports) has one core per PU.
  const hwloc_obj_type_t core_type = core_count > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  const int count = hwloc_get_nbobjs_by_type(topology, core_type);
  for (int index = 0; index < count; ++index) {
    const hwloc_obj_t object = hwloc_get_obj_by_type(topology, core_type, index);
    records::Core core;
    core.package = package_index_of(topology, object);
    const int first_node = object->nodeset ? hwloc_bitmap_first(object->nodeset) : -1;
    core.numa_node = first_node < 0 ? 0 : first_node;
    hwloc_bitmap_t online = hwloc_bitmap_dup(object->cpuset);
    hwloc_bitmap_and(online, online, hwloc_topology_get_topology_cpuset(topology));
    core.pus = bitmap_indices(online);
    hwloc_bitmap_free(online);
    if (!core.pus.empty()) cores.push_back(std::move(core));
  }
  return cores;
}

std::vector<records::NumaNode> read_numa_nodes(hwloc_topology_t topology) {
  std::vector<records::NumaNode> nodes;
  const int count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
  for (int index = 0; index < count; ++index) {
    const hwloc_obj_t object = hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, index);
    records::NumaNode node;
    node.os_index = static_cast<int>(object->os_index);
    const hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_PACKAGE, object);
    node.package = package ? static_cast<int>(package->logical_index) : -1;
    node.memory_bytes = object->attr ? object->attr->numanode.local_memory : 0;
    node.cores = hwloc_get_nbobjs_inside_cpuset_by_type(topology, object->cpuset, HWLOC_OBJ_CORE);
    if (object->subtype) node.kind = object->subtype;
    nodes.push_back(std::move(node));
  }
  return nodes;
}

std::vector<records::CacheLevel> read_caches(hwloc_topology_t topology) {
  std::vector<records::CacheLevel> caches;
  const std::pair<hwloc_obj_type_t, int> cache_types[] = {
      {HWLOC_OBJ_L1CACHE, 1}, {HWLOC_OBJ_L2CACHE, 2}, {HWLOC_OBJ_L3CACHE, 3}, {HWLOC_OBJ_L4CACHE, 4}};
  for (const auto& [type, level] : cache_types) {
    const int instances = hwloc_get_nbobjs_by_type(topology, type);
    if (instances <= 0) continue;
    const hwloc_obj_t first = hwloc_get_obj_by_type(topology, type, 0);
    records::CacheLevel cache;
    cache.level = level;
    cache.type = first->attr->cache.type == HWLOC_OBJ_CACHE_DATA      ? "data"
                 : first->attr->cache.type == HWLOC_OBJ_CACHE_UNIFIED ? "unified"
                                                                      : "instruction";
    cache.size_bytes = first->attr->cache.size;
    cache.instances = instances;
    cache.pus_sharing = hwloc_bitmap_weight(first->cpuset);
    caches.push_back(std::move(cache));
  }
  return caches;
}

std::string read_cpu_model(hwloc_topology_t topology) {
  const hwloc_obj_t package = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PACKAGE, 0);
  const char* model = package ? hwloc_obj_get_info_by_name(package, "CPUModel") : nullptr;
  return model ? model : "";
}

records::Topology read_topology(hwloc_topology_t topology) {
  records::Topology result;
  result.core_list = read_cores(topology);
  result.numa_list = read_numa_nodes(topology);
  result.caches = read_caches(topology);
  result.cores = static_cast<int>(result.core_list.size());
  std::map<int, int> cores_per_package;
  for (const records::Core& core : result.core_list) {
    result.pus += static_cast<int>(core.pus.size());
    result.pus_per_core = std::max(result.pus_per_core, static_cast<int>(core.pus.size()));
    ++cores_per_package[core.package];
  }
  result.packages = std::max(1, hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PACKAGE));
  for (const auto& [package, cores] : cores_per_package)
    result.cores_per_package = std::max(result.cores_per_package, cores);
  result.numa_nodes = static_cast<int>(result.numa_list.size());
  result.offline_pus = hwloc_bitmap_weight(hwloc_topology_get_complete_cpuset(topology)) - result.pus;
  const hwloc_obj_t root = hwloc_get_root_obj(topology);
  result.memory_bytes = root->total_memory;
  return result;
}

std::string detect_launcher() {
  if (std::getenv("SLURM_JOB_ID") && std::getenv("SLURM_PROCID")) return "slurm";
  if (std::getenv("OMPI_COMM_WORLD_RANK")) return "openmpi";
  if (std::getenv("PMI_RANK")) return "mpich";
  return "";
}

std::string pu_list_text(const std::vector<int>& pus) {
  std::string text;
  for (int pu : pus) text += (text.empty() ? "" : ",") + std::to_string(pu);
  return text;
}

}  // namespace

records::Binding describe_this_process_binding(const records::Topology& topology) {
  records::Binding binding;
  cpu_set_t affinity;
  CPU_ZERO(&affinity);
  // The affinity mask already excludes what the cgroup cpuset forbids (the kernel intersects them).
  if (sched_getaffinity(0, sizeof affinity, &affinity) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &affinity)) binding.allowed_pus.push_back(cpu);
  }
  const std::set<int> allowed(binding.allowed_pus.begin(), binding.allowed_pus.end());
  for (const records::Core& core : topology.core_list)
    if (std::any_of(core.pus.begin(), core.pus.end(), [&](int pu) { return allowed.count(pu) > 0; }))
      ++binding.allowed_cores;
  binding.openmp_threads = omp_get_max_threads();
  if (const char* env = std::getenv("OMP_NUM_THREADS")) binding.omp_num_threads_env = env;
  binding.launcher = detect_launcher();

  const int allowed_pus = static_cast<int>(binding.allowed_pus.size());
  if (binding.allowed_cores < topology.cores) {
    std::string warning = "this process is bound to " + std::to_string(binding.allowed_cores) + " of " +
                          std::to_string(topology.cores) + " cores (CPUs " + pu_list_text(binding.allowed_pus) +
                          "): OpenMP will use " + std::to_string(binding.openmp_threads) + " thread" +
                          (binding.openmp_threads == 1 ? "" : "s");
    if (binding.launcher == "openmpi")
      warning +=
          "; Open MPI binds each rank to one core by default: give each rank its cores with "
          "`--map-by ppr:N:socket:PE=M --bind-to core` (or `--bind-to none`)";
    else if (binding.launcher == "slurm")
      warning += "; check --cpus-per-task and --cpu-bind of the job step";
    binding.warnings.push_back(warning);
  }
  if (binding.openmp_threads > allowed_pus)
    binding.warnings.push_back(
        "OpenMP will start " + std::to_string(binding.openmp_threads) + " threads on " + std::to_string(allowed_pus) +
        " allowed CPUs: threads will time-share (OMP_NUM_THREADS=" + binding.omp_num_threads_env + ")");
  return binding;
}

Expected<records::MachineProfile> describe_this_machine() {
  auto topology = load_topology("");
  if (!topology) return topology.error();
  records::MachineProfile profile;
  profile.kind = records::MachineKind::cpu_node;
  profile.origin = records::ProfileOrigin::probe;
  char hostname[256] = {};
  gethostname(hostname, sizeof hostname - 1);
  profile.name = hostname;
  profile.topology = read_topology(topology->get());
  profile.cpu.model = read_cpu_model(topology->get());
  profile.cpu.isa = detect_dnn_isa_features();
  profile.cpu.onednn_isa = onednn_effective_isa();
  profile.description = "probed on " + profile.name;
  profile.binding = describe_this_process_binding(profile.topology);
  return profile;
}

Expected<records::MachineProfile> describe_topology_file(const std::string& xml_path) {
  auto topology = load_topology(xml_path);
  if (!topology) return topology.error();
  records::MachineProfile profile;
  profile.kind = records::MachineKind::cpu_node;
  profile.origin = records::ProfileOrigin::topology_file;
  const auto slash = xml_path.find_last_of('/');
  std::string stem = slash == std::string::npos ? xml_path : xml_path.substr(slash + 1);
  if (stem.size() > 4 && stem.compare(stem.size() - 4, 4, ".xml") == 0) stem.resize(stem.size() - 4);
  profile.name = stem;
  profile.description = "hwloc topology " + xml_path;
  profile.topology = read_topology(topology->get());
  if (profile.topology.cores == 0) return bad_input(xml_path + ": the topology has no CPUs");
  if (auto bounded = records::check_topology_bounds(profile.topology, xml_path); !bounded) return bounded.error();
  profile.cpu.model = read_cpu_model(topology->get());
  return profile;
}

}  // namespace dnntune::probe
