// model/gpu_node.cpp — see gpu_node.hpp.
#include "model/gpu_node.hpp"

namespace dnntune::model {

std::optional<double> gpu_peak_flops(const GpuNode& node, GpuPrecision precision) {
  switch (precision) {
    case GpuPrecision::tf32:
      return node.tf32_flops;
    case GpuPrecision::bf16:
      return node.bf16_flops;
    case GpuPrecision::fp16:
      return node.fp16_flops;
    default:
      return node.fp32_flops;
  }
}

GpuPrecision default_gpu_precision(const GpuNode& node) {
  return node.tf32_flops ? GpuPrecision::tf32 : GpuPrecision::fp32;
}

Expected<void> check_gpu_precision(const GpuNode& node, GpuPrecision precision) {
  if (gpu_peak_flops(node, precision)) return {};
  const char* what = precision == GpuPrecision::tf32   ? "TF32 tensor cores (Ampere and later)"
                     : precision == GpuPrecision::bf16 ? "bf16 math (Ampere and later)"
                                                       : "fp16 math";
  std::string available = "fp32";
  for (GpuPrecision other : {GpuPrecision::tf32, GpuPrecision::bf16, GpuPrecision::fp16})
    if (gpu_peak_flops(node, other)) available += ", " + gpu_precision_name(other);
  return bad_input("a " + node.name + " (" + node.model + ") has no " + what + ": --precision " +
                   gpu_precision_name(precision) + " does not run there (it has " + available + ")");
}

Expected<GpuNode> gpu_node(const records::MachineProfile& profile) {
  if (profile.kind != records::MachineKind::gpu || !profile.gpu)
    return bad_input(profile.name + ": the GPU cost model needs a GPU profile (kind \"gpu\")");
  const records::Gpu& gpu = *profile.gpu;
  GpuNode node;
  node.name = profile.name;
  node.model = gpu.model;
  node.architecture = gpu.architecture;
  node.fp32_flops = gpu.fp32_tflops.value * 1e12;
  if (gpu.tensor_tflops) node.tensor_flops = gpu.tensor_tflops->value * 1e12;
  if (gpu.tf32_tflops) node.tf32_flops = gpu.tf32_tflops->value * 1e12;
  if (gpu.bf16_tflops) node.bf16_flops = gpu.bf16_tflops->value * 1e12;
  if (gpu.fp16_tflops) node.fp16_flops = gpu.fp16_tflops->value * 1e12;
  for (const auto* peak : {&node.tf32_flops, &node.bf16_flops, &node.fp16_flops})
    if (*peak && !(**peak > 0)) return bad_input(profile.name + ": a peak per precision must be > 0 TFLOP/s");
  node.memory_bandwidth = gpu.memory_bandwidth_gbs.value * 1e9;
  node.memory_bytes = static_cast<double>(gpu.memory_bytes);
  if (node.memory_bytes <= 0) return bad_input(profile.name + ": (/gpu/memory_bytes) must be > 0");
  node.l2_bytes = static_cast<double>(gpu.l2_bytes);
  node.host_cpu = gpu.host_cpu;
  if (gpu.gpus_per_node > 0) {
    node.gpus_per_node = gpu.gpus_per_node;
  } else {
    node.assumptions.push_back("one GPU per node (the profile names no gpus_per_node)");
  }
  if (gpu.multiprocessors > 0) {
    node.multiprocessors = gpu.multiprocessors;
  } else {
    node.assumptions.push_back("a " + std::to_string(default_multiprocessors) +
                               "-SM chip for the utilisation curve (the profile names no multiprocessors)");
  }
  node.intra_node = {default_intra_node_latency_us * 1e-6, default_intra_node_gbs, false,
                     "default PCIe 3.0 x16 ring step"};
  if (gpu.interconnect) {
    node.interconnect_kind = gpu.interconnect->kind;
    node.fabric_links = gpu.interconnect->fabric_links;
    if (gpu.interconnect->bus_gbs)
      node.intra_node = {gpu.interconnect->latency_us * 1e-6, gpu.interconnect->bus_gbs->value, false,
                         "spec " + gpu.interconnect->kind};
    else
      node.assumptions.push_back("PCIe 3.0 ring steps between GPUs (the profile's interconnect names no bus_gbs)");
  } else if (node.gpus_per_node > 1) {
    node.interconnect_kind = "pcie";
    node.assumptions.push_back("PCIe 3.0 ring steps between GPUs (the profile names no interconnect)");
  }
  return node;
}

}  // namespace dnntune::model
