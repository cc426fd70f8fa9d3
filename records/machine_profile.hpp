// records/machine_profile.hpp — MachineProfile: everything dnntune knows about one node (or one
// GPU), whether probed on this machine, read from an hwloc XML export, or written from a spec
// sheet. A light header on purpose: model/ and tuner/ include it without pulling in hwloc,
// oneDNN or libtorch. JSON read/write and the fingerprint live in machine_profile.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace dnntune::records {

constexpr const char* machine_profile_schema = "dnntune.machine";
constexpr int machine_profile_schema_version = 1;

// Where a figure comes from. A profile never mixes them silently: every performance figure
// says whether it was measured here or copied from a spec sheet.
enum class Provenance { measured, spec };

// One performance figure with its provenance; measured ones carry their spread.
struct Figure {
  double value = 0;
  Provenance provenance = Provenance::spec;
  double coefficient_of_variation = 0;  // stddev / mean of the repetitions (measured only)
  int repetitions = 0;                  // measured only
  std::string note;                     // how it was obtained, e.g. "2.5 GHz x 64 FLOP/cycle"
};

// One measured point of a scaling curve (FMA peak or triad bandwidth over threads).
struct ScalingPoint {
  int cores = 0;      // physical cores used
  int threads = 0;    // software threads (== cores, or cores x PUs per core with SMT)
  bool smt = false;   // SMT siblings used too
  double median = 0;  // GFLOP/s or GB/s for the whole set of threads
  double coefficient_of_variation = 0;
  int repetitions = 0;
};

struct Core {
  int package = 0;       // logical package index
  int numa_node = 0;     // OS index of the first NUMA node local to the core
  std::vector<int> pus;  // OS indices of its hardware threads (SMT siblings), online only
};

struct NumaNode {
  int os_index = 0;
  int package = -1;                // logical package index holding it (-1: none or several)
  std::uint64_t memory_bytes = 0;  // 0 when unknown
  int cores = 0;                   // cores local to it
  std::string kind;                // hwloc subtype when known (e.g. "MCDRAM"), else ""
};

struct CacheLevel {
  int level = 0;                 // 1, 2, 3
  std::string type;              // "data", "unified" or "instruction"
  std::uint64_t size_bytes = 0;  // one instance
  int instances = 0;
  int pus_sharing = 0;  // PUs sharing one instance
};

struct Topology {
  int packages = 0;
  int numa_nodes = 0;
  int cores = 0;
  int pus = 0;
  int cores_per_package = 0;       // the largest, when packages differ (offline CPUs)
  int pus_per_core = 0;            // the largest (SMT ways)
  int offline_pus = 0;             // PUs present but offline or unusable
  std::uint64_t memory_bytes = 0;  // 0 when unknown (a spec sheet names no node memory)
  std::vector<Core> core_list;     // empty for spec profiles: a spec sheet has no OS numbering
  std::vector<NumaNode> numa_list;
  std::vector<CacheLevel> caches;
};

// The CPUs this process may run on, and what that means for OpenMP. Only for a profile probed
// on this machine: a topology file or a spec sheet says nothing about a process.
struct Binding {
  std::vector<int> allowed_pus;     // OS indices: cgroup/cpuset limits ∩ this process's affinity
  int allowed_cores = 0;            // physical cores with at least one allowed PU
  int openmp_threads = 0;           // what OpenMP will start (omp_get_max_threads)
  std::string omp_num_threads_env;  // OMP_NUM_THREADS as set, or ""
  std::string launcher;             // "slurm", "openmpi", "mpich" or "" from the environment
  std::vector<std::string> warnings;
};

struct Cpu {
  std::string model;
  std::vector<std::string> isa;  // DNN-relevant: avx2, fma, avx512f, avx512_vnni, avx512_bf16, amx_tile...
  std::string onednn_isa;        // what oneDNN dispatches to on this machine ("" if not probed)
  std::optional<Figure> base_ghz;
  std::optional<Figure> max_ghz;
  int fp32_flops_per_cycle_per_core = 0;  // 0 when unknown
};

struct Performance {
  std::optional<Figure> peak_fp32_gflops_per_core;
  std::optional<Figure> memory_bandwidth_gbs_per_package;
  std::optional<Figure> gemm_gflops_one_core;  // a large oneDNN sgemm, cross-checks the FMA peak
  // Nanoseconds to fault in a fresh 4 KiB page: one thread, every core at once (per thread), and
  // with transparent huge pages (probe/allocators.hpp).
  std::optional<Figure> first_touch_ns_per_page;
  std::optional<Figure> first_touch_ns_per_page_all_cores;
  std::optional<Figure> first_touch_ns_per_page_huge;
  std::string fma_vector_isa;               // the vector width the FMA loop used
  std::vector<ScalingPoint> fma_scaling;    // GFLOP/s over cores, with and without SMT
  std::vector<ScalingPoint> triad_scaling;  // GB/s over cores (STREAM triad bytes)
};

// How the GPUs of one node exchange data, and how the node reaches the others.
struct GpuInterconnect {
  std::string kind;                     // "nvlink-hybrid-cube-mesh", "nvswitch", "pcie-switch", ...
  std::optional<Figure> bus_gbs;        // GB/s of a ring step between neighbouring GPUs (one direction, usable)
  double latency_us = 0;                // per ring step (NCCL's base latency on this link)
  std::optional<Figure> host_pcie_gbs;  // GPU <-> host link, one direction
  int fabric_links = 1;                 // network ports per node (DGX: one per GPU); they share the fabric's load
};

struct Gpu {
  std::string model;
  // NVIDIA's name for the chip's generation ("kepler", "pascal", "volta", "ampere", "hopper"):
  // cuDNN's kernels and algorithms differ by it (model/convolution_algorithm.hpp). "": unknown.
  std::string architecture;
  Figure fp32_tflops;
  Figure memory_bandwidth_gbs;
  std::uint64_t memory_bytes = 0;
  // The node and the chip beyond the four figures above (absent in old profiles: then one GPU
  // per node, the model's defaults, and the prediction says so).
  int gpus_per_node = 0;    // 0: unknown (one GPU is modelled)
  int multiprocessors = 0;  // SMs: how much parallel work fills the chip; 0: unknown
  std::uint64_t l2_bytes = 0;
  // Tensor-core peak, flagged: the study (and dnntune by default) trains in fp32, which does not
  // use it (TF32 on A100/H100 is opt-in in PyTorch for convolutions' matmuls).
  std::optional<Figure> tensor_tflops;
  // Dense peaks per precision (absent: the GPU has no such math; model/gpu_precision.hpp):
  // TF32 and bf16 tensor cores from Ampere on, fp16 tensor cores from Volta on (P100: fp16 at
  // twice its fp32 rate on its CUDA cores, no tensor cores).
  std::optional<Figure> tf32_tflops;
  std::optional<Figure> bf16_tflops;
  std::optional<Figure> fp16_tflops;
  std::optional<GpuInterconnect> interconnect;
  std::string host_cpu;  // the node's CPUs, as its spec sheet names them
};

enum class MachineKind { cpu_node, gpu };
// How the profile was made: probed here, read from an hwloc XML file, or a spec sheet.
enum class ProfileOrigin { probe, topology_file, spec };

struct MachineProfile {
  std::string name;  // spec name ("skylake-8180"), hostname, or the XML file's stem
  std::string description;
  MachineKind kind = MachineKind::cpu_node;
  ProfileOrigin origin = ProfileOrigin::spec;
  std::vector<std::string> sources;  // citations for spec figures
  Cpu cpu;
  Topology topology;
  std::optional<Binding> binding;
  Performance performance;
  std::optional<Gpu> gpu;
};

// A stable 16-hex-digit fingerprint of what identifies the hardware (CPU model, topology,
// sibling numbering, caches, GPU model and memory): equal for two probes of the same node,
// different when any of those changes; never depends on measured figures, bindings, names or
// the node's memory size (a VM's changes as it runs).
std::string fingerprint(const MachineProfile& profile);

std::string to_string(Provenance provenance);
std::string to_string(ProfileOrigin origin);
std::string to_string(MachineKind kind);

// JSON text (with schema header and fingerprint) and back. `origin_name` names the source in
// error messages ("FILE.json", "<built-in skylake-8180>").
std::string to_json_text(const MachineProfile& profile);
Expected<MachineProfile> machine_profile_from_json_text(const std::string& text, const std::string& origin_name);
Expected<MachineProfile> read_machine_profile(const std::string& path);

}  // namespace dnntune::records
