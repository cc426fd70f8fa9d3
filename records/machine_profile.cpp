// records/machine_profile.cpp — MachineProfile to and from JSON, and its fingerprint.
// Plain nlohmann conversions per struct; enums are written as words and an unknown word is an
// error (never silently the first value). Optional members are simply absent when unset.
#include "records/machine_profile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "common/digest.hpp"
#include "common/json_file.hpp"
#include "records/record_bounds.hpp"

namespace dnntune::records {

using nlohmann::json;

namespace {

constexpr std::pair<Provenance, const char*> provenance_words[] = {{Provenance::measured, "measured"},
                                                                   {Provenance::spec, "spec"}};
constexpr std::pair<ProfileOrigin, const char*> origin_words[] = {
    {ProfileOrigin::probe, "probe"}, {ProfileOrigin::topology_file, "topology-file"}, {ProfileOrigin::spec, "spec"}};
constexpr std::pair<MachineKind, const char*> kind_words[] = {{MachineKind::cpu_node, "cpu-node"},
                                                              {MachineKind::gpu, "gpu"}};

template <class T>
void put_optional(json& object, const char* key, const std::optional<T>& value) {
  if (value) object[key] = *value;
}
template <class T>
void get_optional(const json& object, const char* key, std::optional<T>& value) {
  if (object.contains(key)) value = object.at(key).get<T>();
}
// Counts and sizes are JSON integers (json_integer): 56.5 cores is not a topology.
template <class T>
void get_or_keep(const json& object, const char* key, T& value) {
  if (!object.contains(key)) return;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    value = json_integer<T>(object.at(key));
  else
    value = object.at(key).get<T>();
}
std::vector<int> integers(const json& array) {
  if (!array.is_array()) throw json::type_error::create(302, "must be an array of integers", &array);
  std::vector<int> values;
  for (const json& item : array) values.push_back(json_integer<int>(item));
  return values;
}

}  // namespace

std::string to_string(Provenance provenance) { return enum_word(provenance, provenance_words); }
std::string to_string(ProfileOrigin origin) { return enum_word(origin, origin_words); }
std::string to_string(MachineKind kind) { return enum_word(kind, kind_words); }

// --- per-struct conversions (found by nlohmann through argument-dependent lookup) ---

void to_json(json& out, const Figure& figure) {
  out = {{"value", figure.value}, {"provenance", to_string(figure.provenance)}};
  if (figure.provenance == Provenance::measured) {
    out["coefficient_of_variation"] = figure.coefficient_of_variation;
    out["repetitions"] = figure.repetitions;
  }
  if (!figure.note.empty()) out["note"] = figure.note;
}
void from_json(const json& in, Figure& figure) {
  figure.value = in.at("value").get<double>();
  figure.provenance = enum_from_word(in.at("provenance"), provenance_words);
  get_or_keep(in, "coefficient_of_variation", figure.coefficient_of_variation);
  get_or_keep(in, "repetitions", figure.repetitions);
  get_or_keep(in, "note", figure.note);
}

void to_json(json& out, const ScalingPoint& point) {
  out = {{"cores", point.cores},
         {"threads", point.threads},
         {"smt", point.smt},
         {"median", point.median},
         {"coefficient_of_variation", point.coefficient_of_variation},
         {"repetitions", point.repetitions}};
}
void from_json(const json& in, ScalingPoint& point) {
  point.cores = json_integer<int>(in.at("cores"));
  point.threads = json_integer<int>(in.at("threads"));
  point.smt = in.at("smt").get<bool>();
  point.median = in.at("median").get<double>();
  point.coefficient_of_variation = in.at("coefficient_of_variation").get<double>();
  point.repetitions = json_integer<int>(in.at("repetitions"));
}

void to_json(json& out, const Core& core) {
  out = {{"package", core.package}, {"numa_node", core.numa_node}, {"pus", core.pus}};
}
void from_json(const json& in, Core& core) {
  core.package = json_integer<int>(in.at("package"));
  core.numa_node = json_integer<int>(in.at("numa_node"));
  core.pus = integers(in.at("pus"));
}

void to_json(json& out, const NumaNode& node) {
  out = {{"os_index", node.os_index},
         {"package", node.package},
         {"memory_bytes", node.memory_bytes},
         {"cores", node.cores}};
  if (!node.kind.empty()) out["kind"] = node.kind;
}
void from_json(const json& in, NumaNode& node) {
  node.os_index = json_integer<int>(in.at("os_index"));
  node.package = json_integer<int>(in.at("package"));
  node.memory_bytes = json_integer<std::uint64_t>(in.at("memory_bytes"));
  node.cores = json_integer<int>(in.at("cores"));
  get_or_keep(in, "kind", node.kind);
}

void to_json(json& out, const CacheLevel& cache) {
  out = {{"level", cache.level},
         {"type", cache.type},
         {"size_bytes", cache.size_bytes},
         {"instances", cache.instances},
         {"pus_sharing", cache.pus_sharing}};
}
void from_json(const json& in, CacheLevel& cache) {
  cache.level = json_integer<int>(in.at("level"));
  cache.type = in.at("type").get<std::string>();
  cache.size_bytes = json_integer<std::uint64_t>(in.at("size_bytes"));
  cache.instances = json_integer<int>(in.at("instances"));
  cache.pus_sharing = json_integer<int>(in.at("pus_sharing"));
}

void to_json(json& out, const Topology& topology) {
  out = {{"packages", topology.packages},
         {"numa_nodes", topology.numa_nodes},
         {"cores", topology.cores},
         {"pus", topology.pus},
         {"cores_per_package", topology.cores_per_package},
         {"pus_per_core", topology.pus_per_core},
         {"offline_pus", topology.offline_pus},
         {"memory_bytes", topology.memory_bytes},
         {"core_list", topology.core_list},
         {"numa_list", topology.numa_list},
         {"caches", topology.caches}};
}
void from_json(const json& in, Topology& topology) {
  topology.packages = json_integer<int>(in.at("packages"));
  topology.numa_nodes = json_integer<int>(in.at("numa_nodes"));
  topology.cores = json_integer<int>(in.at("cores"));
  topology.pus = json_integer<int>(in.at("pus"));
  topology.cores_per_package = json_integer<int>(in.at("cores_per_package"));
  topology.pus_per_core = json_integer<int>(in.at("pus_per_core"));
  get_or_keep(in, "offline_pus", topology.offline_pus);
  topology.memory_bytes = json_integer<std::uint64_t>(in.at("memory_bytes"));
  get_or_keep(in, "core_list", topology.core_list);
  get_or_keep(in, "numa_list", topology.numa_list);
  get_or_keep(in, "caches", topology.caches);
}

void to_json(json& out, const Binding& binding) {
  out = {{"allowed_pus", binding.allowed_pus},
         {"allowed_cores", binding.allowed_cores},
         {"openmp_threads", binding.openmp_threads},
         {"omp_num_threads_env", binding.omp_num_threads_env},
         {"launcher", binding.launcher},
         {"warnings", binding.warnings}};
}
void from_json(const json& in, Binding& binding) {
  binding.allowed_pus = integers(in.at("allowed_pus"));
  binding.allowed_cores = json_integer<int>(in.at("allowed_cores"));
  binding.openmp_threads = json_integer<int>(in.at("openmp_threads"));
  get_or_keep(in, "omp_num_threads_env", binding.omp_num_threads_env);
  get_or_keep(in, "launcher", binding.launcher);
  get_or_keep(in, "warnings", binding.warnings);
}

void to_json(json& out, const Cpu& cpu) {
  out = {{"model", cpu.model},
         {"isa", cpu.isa},
         {"onednn_isa", cpu.onednn_isa},
         {"fp32_flops_per_cycle_per_core", cpu.fp32_flops_per_cycle_per_core}};
  put_optional(out, "base_ghz", cpu.base_ghz);
  put_optional(out, "max_ghz", cpu.max_ghz);
}
void from_json(const json& in, Cpu& cpu) {
  cpu.model = in.at("model").get<std::string>();
  get_or_keep(in, "isa", cpu.isa);
  get_or_keep(in, "onednn_isa", cpu.onednn_isa);
  get_or_keep(in, "fp32_flops_per_cycle_per_core", cpu.fp32_flops_per_cycle_per_core);
  get_optional(in, "base_ghz", cpu.base_ghz);
  get_optional(in, "max_ghz", cpu.max_ghz);
}

void to_json(json& out, const Performance& performance) {
  out = json::object();
  put_optional(out, "peak_fp32_gflops_per_core", performance.peak_fp32_gflops_per_core);
  put_optional(out, "memory_bandwidth_gbs_per_package", performance.memory_bandwidth_gbs_per_package);
  put_optional(out, "gemm_gflops_one_core", performance.gemm_gflops_one_core);
  put_optional(out, "first_touch_ns_per_page", performance.first_touch_ns_per_page);
  put_optional(out, "first_touch_ns_per_page_all_cores", performance.first_touch_ns_per_page_all_cores);
  put_optional(out, "first_touch_ns_per_page_huge", performance.first_touch_ns_per_page_huge);
  if (!performance.fma_vector_isa.empty()) out["fma_vector_isa"] = performance.fma_vector_isa;
  if (!performance.fma_scaling.empty()) out["fma_scaling"] = performance.fma_scaling;
  if (!performance.triad_scaling.empty()) out["triad_scaling"] = performance.triad_scaling;
}
void from_json(const json& in, Performance& performance) {
  get_optional(in, "peak_fp32_gflops_per_core", performance.peak_fp32_gflops_per_core);
  get_optional(in, "memory_bandwidth_gbs_per_package", performance.memory_bandwidth_gbs_per_package);
  get_optional(in, "gemm_gflops_one_core", performance.gemm_gflops_one_core);
  get_optional(in, "first_touch_ns_per_page", performance.first_touch_ns_per_page);
  get_optional(in, "first_touch_ns_per_page_all_cores", performance.first_touch_ns_per_page_all_cores);
  get_optional(in, "first_touch_ns_per_page_huge", performance.first_touch_ns_per_page_huge);
  get_or_keep(in, "fma_vector_isa", performance.fma_vector_isa);
  get_or_keep(in, "fma_scaling", performance.fma_scaling);
  get_or_keep(in, "triad_scaling", performance.triad_scaling);
}

void to_json(json& out, const GpuInterconnect& link) {
  out = {{"kind", link.kind}, {"latency_us", link.latency_us}, {"fabric_links", link.fabric_links}};
  put_optional(out, "bus_gbs", link.bus_gbs);
  put_optional(out, "host_pcie_gbs", link.host_pcie_gbs);
}
void from_json(const json& in, GpuInterconnect& link) {
  link.kind = in.at("kind").get<std::string>();
  get_optional(in, "bus_gbs", link.bus_gbs);
  get_or_keep(in, "latency_us", link.latency_us);
  get_optional(in, "host_pcie_gbs", link.host_pcie_gbs);
  get_or_keep(in, "fabric_links", link.fabric_links);
}

void to_json(json& out, const Gpu& gpu) {
  out = {{"model", gpu.model},
         {"fp32_tflops", gpu.fp32_tflops},
         {"memory_bandwidth_gbs", gpu.memory_bandwidth_gbs},
         {"memory_bytes", gpu.memory_bytes}};
  if (!gpu.architecture.empty()) out["architecture"] = gpu.architecture;
  if (gpu.gpus_per_node > 0) out["gpus_per_node"] = gpu.gpus_per_node;
  if (gpu.multiprocessors > 0) out["multiprocessors"] = gpu.multiprocessors;
  if (gpu.l2_bytes > 0) out["l2_bytes"] = gpu.l2_bytes;
  put_optional(out, "tensor_tflops", gpu.tensor_tflops);
  put_optional(out, "tf32_tflops", gpu.tf32_tflops);
  put_optional(out, "bf16_tflops", gpu.bf16_tflops);
  put_optional(out, "fp16_tflops", gpu.fp16_tflops);
  put_optional(out, "interconnect", gpu.interconnect);
  if (!gpu.host_cpu.empty()) out["host_cpu"] = gpu.host_cpu;
}
void from_json(const json& in, Gpu& gpu) {
  gpu.model = in.at("model").get<std::string>();
  gpu.fp32_tflops = in.at("fp32_tflops").get<Figure>();
  gpu.memory_bandwidth_gbs = in.at("memory_bandwidth_gbs").get<Figure>();
  gpu.memory_bytes = json_integer<std::uint64_t>(in.at("memory_bytes"));
  get_or_keep(in, "architecture", gpu.architecture);
  get_or_keep(in, "gpus_per_node", gpu.gpus_per_node);
  get_or_keep(in, "multiprocessors", gpu.multiprocessors);
  get_or_keep(in, "l2_bytes", gpu.l2_bytes);
  get_optional(in, "tensor_tflops", gpu.tensor_tflops);
  get_optional(in, "tf32_tflops", gpu.tf32_tflops);
  get_optional(in, "bf16_tflops", gpu.bf16_tflops);
  get_optional(in, "fp16_tflops", gpu.fp16_tflops);
  get_optional(in, "interconnect", gpu.interconnect);
  get_or_keep(in, "host_cpu", gpu.host_cpu);
}

// --- fingerprint ---

std::string fingerprint(const MachineProfile& profile) {
  // Only what identifies the hardware, serialised canonically, then FNV-1a 64.
  json identity = {{"kind", to_string(profile.kind)}, {"cpu_model", profile.cpu.model}};
  const Topology& topology = profile.topology;
  // Memory size is left out: a virtual machine's reported memory can change while it runs
  // (docs/results.md), and it does not change what a kernel costs.
  identity["topology"] = {{"packages", topology.packages},   {"numa_nodes", topology.numa_nodes},
                          {"cores", topology.cores},         {"pus", topology.pus},
                          {"core_list", topology.core_list}, {"caches", topology.caches}};
  if (profile.gpu) identity["gpu"] = {{"model", profile.gpu->model}, {"memory_bytes", profile.gpu->memory_bytes}};
  return digest_hex(identity.dump());
}

// --- whole profile ---

std::string to_json_text(const MachineProfile& profile) {
  json out = {{"schema", machine_profile_schema},
              {"schema_version", machine_profile_schema_version},
              {"name", profile.name},
              {"description", profile.description},
              {"kind", to_string(profile.kind)},
              {"origin", to_string(profile.origin)},
              {"fingerprint", fingerprint(profile)},
              {"sources", profile.sources}};
  if (profile.kind == MachineKind::cpu_node) {
    out["cpu"] = profile.cpu;
    out["topology"] = profile.topology;
  }
  put_optional(out, "binding", profile.binding);
  out["performance"] = profile.performance;
  put_optional(out, "gpu", profile.gpu);
  return out.dump(2) + "\n";
}

namespace {

// Every peak, bandwidth and link within what real hardware spans (records/record_bounds.hpp).
Expected<void> check_physical_figures(const MachineProfile& profile, const std::string& origin) {
  const Performance& performance = profile.performance;
  const std::tuple<const char*, const std::optional<Figure>*, const PhysicalRange*> figures[] = {
      {"/performance/peak_fp32_gflops_per_core/value", &performance.peak_fp32_gflops_per_core, &cpu_core_gflops_range},
      {"/performance/gemm_gflops_one_core/value", &performance.gemm_gflops_one_core, &cpu_core_gflops_range},
      {"/performance/memory_bandwidth_gbs_per_package/value", &performance.memory_bandwidth_gbs_per_package,
       &package_bandwidth_gbs_range},
      {"/cpu/base_ghz/value", &profile.cpu.base_ghz, &cpu_clock_ghz_range},
      {"/cpu/max_ghz/value", &profile.cpu.max_ghz, &cpu_clock_ghz_range}};
  for (const auto& [member, figure, range] : figures)
    if (*figure)
      if (auto held = check_physical((*figure)->value, *range, origin, member); !held) return held;
  // A scaling curve's points: FMA GFLOP/s per core used, triad GB/s within what its packages hold.
  const int packages = std::max(1, profile.topology.packages);
  for (const ScalingPoint& point : performance.fma_scaling)
    if (point.cores >= 1)
      if (auto held = check_physical(point.median / point.cores, cpu_core_gflops_range, origin,
                                     "/performance/fma_scaling median per core");
          !held)
        return held;
  for (const ScalingPoint& point : performance.triad_scaling)
    if (!(point.median >= package_bandwidth_gbs_range.low &&
          point.median <= package_bandwidth_gbs_range.high * packages))
      return check_physical(point.median, package_bandwidth_gbs_range, origin, "/performance/triad_scaling median");
  if (!profile.gpu) return {};
  const Gpu& gpu = *profile.gpu;
  if (auto held = check_physical(gpu.fp32_tflops.value, gpu_fp32_tflops_range, origin, "/gpu/fp32_tflops/value"); !held)
    return held;
  if (auto held = check_physical(gpu.memory_bandwidth_gbs.value, gpu_bandwidth_gbs_range, origin,
                                 "/gpu/memory_bandwidth_gbs/value");
      !held)
    return held;
  const std::pair<const char*, const std::optional<Figure>*> peaks[] = {
      {"/gpu/tensor_tflops/value", &gpu.tensor_tflops},
      {"/gpu/tf32_tflops/value", &gpu.tf32_tflops},
      {"/gpu/bf16_tflops/value", &gpu.bf16_tflops},
      {"/gpu/fp16_tflops/value", &gpu.fp16_tflops}};
  for (const auto& [member, figure] : peaks)
    if (*figure)
      if (auto held = check_physical((*figure)->value, gpu_precision_tflops_range, origin, member); !held) return held;
  if (!gpu.interconnect) return {};
  if (gpu.interconnect->bus_gbs)
    if (auto held = check_physical(gpu.interconnect->bus_gbs->value, gpu_bus_gbs_range, origin,
                                   "/gpu/interconnect/bus_gbs/value");
        !held)
      return held;
  if (gpu.interconnect->host_pcie_gbs)
    return check_physical(gpu.interconnect->host_pcie_gbs->value, host_pcie_gbs_range, origin,
                          "/gpu/interconnect/host_pcie_gbs/value");
  return {};
}

// Every figure the model divides by or scales with is finite and > 0 when present; the topology
// stays within what a node can hold. Names the member that is not.
Expected<void> check_figures(const MachineProfile& profile, const std::string& origin) {
  const auto positive = [](double value) { return std::isfinite(value) && value > 0; };
  const std::pair<const char*, const std::optional<Figure>*> figures[] = {
      {"/performance/peak_fp32_gflops_per_core", &profile.performance.peak_fp32_gflops_per_core},
      {"/performance/memory_bandwidth_gbs_per_package", &profile.performance.memory_bandwidth_gbs_per_package},
      {"/performance/gemm_gflops_one_core", &profile.performance.gemm_gflops_one_core},
      {"/cpu/base_ghz", &profile.cpu.base_ghz},
      {"/cpu/max_ghz", &profile.cpu.max_ghz}};
  for (const auto& [member, figure] : figures)
    if (*figure && !positive((*figure)->value))
      return bad_input(origin + ": (" + member + "/value) must be a finite number > 0");
  if (auto physical = check_physical_figures(profile, origin); !physical) return physical;
  const std::pair<const char*, const std::vector<ScalingPoint>*> curves[] = {
      {"/performance/fma_scaling", &profile.performance.fma_scaling},
      {"/performance/triad_scaling", &profile.performance.triad_scaling}};
  for (const auto& [member, points] : curves)
    for (const ScalingPoint& point : *points)
      if (!positive(point.median) || point.cores < 1 || point.threads < 1)
        return bad_input(origin + ": (" + member + ") every point needs cores and threads >= 1 and a median > 0");
  if (profile.gpu && (!positive(profile.gpu->fp32_tflops.value) || !positive(profile.gpu->memory_bandwidth_gbs.value)))
    return bad_input(origin + ": (/gpu) fp32_tflops and memory_bandwidth_gbs must be finite numbers > 0");
  if (profile.gpu && (profile.gpu->gpus_per_node < 0 || profile.gpu->gpus_per_node > 1024 ||
                      profile.gpu->multiprocessors < 0 || profile.gpu->multiprocessors > 100000 ||
                      (profile.gpu->tensor_tflops && !positive(profile.gpu->tensor_tflops->value))))
    return bad_input(origin + ": (/gpu) needs gpus_per_node 0..1024, multiprocessors 0..100000 and tensor_tflops > 0");
  if (profile.gpu && profile.gpu->interconnect) {
    const GpuInterconnect& link = *profile.gpu->interconnect;
    if ((link.bus_gbs && !positive(link.bus_gbs->value)) ||
        (link.host_pcie_gbs && !positive(link.host_pcie_gbs->value)) || !std::isfinite(link.latency_us) ||
        link.latency_us < 0 || link.latency_us > 1e6 || link.fabric_links < 1 || link.fabric_links > 1024)
      return bad_input(origin +
                       ": (/gpu/interconnect) needs bus_gbs and host_pcie_gbs > 0, latency_us 0..1e6 and "
                       "fabric_links 1..1024");
  }
  // Every figure's spread, and the first-touch costs (0: not measured), are finite and >= 0.
  const std::pair<const char*, const std::optional<Figure>*> spread_figures[] = {
      {"/performance/peak_fp32_gflops_per_core", &profile.performance.peak_fp32_gflops_per_core},
      {"/performance/memory_bandwidth_gbs_per_package", &profile.performance.memory_bandwidth_gbs_per_package},
      {"/performance/gemm_gflops_one_core", &profile.performance.gemm_gflops_one_core},
      {"/performance/first_touch_ns_per_page", &profile.performance.first_touch_ns_per_page},
      {"/performance/first_touch_ns_per_page_all_cores", &profile.performance.first_touch_ns_per_page_all_cores},
      {"/performance/first_touch_ns_per_page_huge", &profile.performance.first_touch_ns_per_page_huge},
      {"/cpu/base_ghz", &profile.cpu.base_ghz},
      {"/cpu/max_ghz", &profile.cpu.max_ghz}};
  for (const auto& [member, figure] : spread_figures)
    if (*figure && (!std::isfinite((*figure)->value) || (*figure)->value < 0 ||
                    !std::isfinite((*figure)->coefficient_of_variation) || (*figure)->coefficient_of_variation < 0 ||
                    (*figure)->repetitions < 0))
      return bad_input(origin + ": (" + member +
                       ") needs a finite value, coefficient_of_variation >= 0 and repetitions >= 0");
  if (profile.cpu.fp32_flops_per_cycle_per_core < 0 || profile.cpu.fp32_flops_per_cycle_per_core > 1024)
    return bad_input(origin + ": (/cpu/fp32_flops_per_cycle_per_core) must be 0..1024");
  // A GPU's memory bounds every batch it holds: 0 or 2^64-1 (a -1 read as unsigned) is no GPU.
  if (profile.gpu && (profile.gpu->memory_bytes < 1 || profile.gpu->memory_bytes > (std::uint64_t{1} << 52) ||
                      profile.gpu->l2_bytes > (std::uint64_t{1} << 52)))
    return bad_input(origin + ": (/gpu/memory_bytes) must be 1..2^52 bytes (l2_bytes 0..2^52), not " +
                     std::to_string(profile.gpu->memory_bytes));
  if (profile.kind == MachineKind::cpu_node)
    if (auto bounded = check_topology_bounds(profile.topology, origin); !bounded) return bounded;
  constexpr int most_cpus = 1 << 20;
  const Topology& topology = profile.topology;
  if (topology.packages > topology.cores || topology.cores > most_cpus || topology.pus > most_cpus ||
      topology.cores_per_package < 0 || topology.cores_per_package > topology.cores || topology.pus_per_core < 0 ||
      topology.pus_per_core > topology.pus || topology.numa_nodes < 0 || topology.numa_nodes > topology.pus)
    return bad_input(origin + ": (/topology) needs packages <= cores <= pus <= " + std::to_string(most_cpus) +
                     ", cores_per_package <= cores, pus_per_core <= pus and numa_nodes <= pus");
  return {};
}

Expected<MachineProfile> machine_profile_from_document(const json& document, const std::string& origin_name) {
  if (auto valid = check_schema(document, machine_profile_schema, machine_profile_schema_version, origin_name); !valid)
    return valid.error();
  MachineProfile profile;
  try {
    const json& in = document;
    profile.name = in.at("name").get<std::string>();
    get_or_keep(in, "description", profile.description);
    profile.kind = enum_from_word(in.at("kind"), kind_words);
    profile.origin = enum_from_word(in.at("origin"), origin_words);
    get_or_keep(in, "sources", profile.sources);
    if (profile.kind == MachineKind::cpu_node) {
      profile.cpu = in.at("cpu").get<Cpu>();
      profile.topology = in.at("topology").get<Topology>();
    }
    get_optional(in, "binding", profile.binding);
    get_or_keep(in, "performance", profile.performance);
    get_optional(in, "gpu", profile.gpu);
  } catch (const json::exception& error) {
    return json_conversion_error(error, origin_name);
  }
  // The name is printed in every answer and job script comment: as a network's name, it is
  // refused here rather than reach a terminal holding ESC or a newline.
  const bool printable_name =
      !profile.name.empty() && std::none_of(profile.name.begin(), profile.name.end(), [](char character) {
        return static_cast<unsigned char>(character) < 0x20 || character == 0x7f;
      });
  if (!printable_name)
    return bad_input(origin_name +
                     ": (/name) the machine name is empty or holds control characters (newlines, tabs, ...)");
  if (profile.kind == MachineKind::gpu && !profile.gpu)
    return bad_input(origin_name + ": a \"gpu\" profile needs a \"gpu\" member");
  if (profile.kind == MachineKind::cpu_node &&
      (profile.topology.packages <= 0 || profile.topology.cores <= 0 || profile.topology.pus < profile.topology.cores))
    return bad_input(origin_name + ": topology needs packages > 0, cores > 0 and pus >= cores");
  if (auto valid = check_figures(profile, origin_name); !valid) return valid.error();
  return profile;
}

}  // namespace

Expected<MachineProfile> machine_profile_from_json_text(const std::string& text, const std::string& origin_name) {
  auto document = parse_json(text, origin_name);
  if (!document) return document.error();
  return machine_profile_from_document(*document, origin_name);
}

Expected<MachineProfile> read_machine_profile(const std::string& path) {
  auto document = read_json_file(path);
  if (!document) return document.error();
  return machine_profile_from_document(*document, path);
}

}  // namespace dnntune::records
