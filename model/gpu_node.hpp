// model/gpu_node.hpp — what the GPU cost model needs from a GPU machine profile: the chip's
// fp32 peak, HBM bandwidth, memory and multiprocessors, how many GPUs a node holds and how they
// reach each other (NVLink, NVSwitch or PCIe) and the other nodes. A profile that leaves a figure
// out gets a stated default, listed in `assumptions` so that every prediction can say so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "model/communication.hpp"
#include "model/gpu_precision.hpp"
#include "records/machine_profile.hpp"

namespace dnntune::model {

struct GpuNode {
  std::string name;                    // the profile's ("v100")
  std::string model;                   // "NVIDIA Tesla V100 SXM2"
  std::string architecture;            // "volta" (the profile's; "" unknown): cuDNN's kernels differ by it
  double fp32_flops = 0;               // FLOP/s of one GPU (the CUDA cores; the study trains in fp32)
  std::optional<double> tensor_flops;  // the profile's headline tensor figure (the peaks below are per precision)
  std::optional<double> tf32_flops;    // dense peaks per precision; absent: the GPU lacks that math
  std::optional<double> bf16_flops;
  std::optional<double> fp16_flops;
  double memory_bandwidth = 0;  // bytes/s of HBM (GDDR5 on the K80)
  double memory_bytes = 0;      // one GPU's memory
  int gpus_per_node = 1;
  int multiprocessors = 80;
  double l2_bytes = 0;
  std::string interconnect_kind;  // "nvswitch", "pcie-switch", ...
  LinkModel intra_node;           // one ring step between neighbouring GPUs of a node
  int fabric_links = 1;           // network ports of a node, shared by its GPUs' inter-node traffic
  std::string host_cpu;
  std::vector<std::string> assumptions;  // defaults used where the profile is silent
};

// Defaults for a profile that names no node (old or hand-written GPU profiles).
constexpr int default_multiprocessors = 80;      // a V100-sized chip
constexpr double default_intra_node_gbs = 10.0;  // PCIe 3.0 x16 as a ring step sustains it
constexpr double default_intra_node_latency_us = 8.0;

// The peak of `precision`'s math on this GPU, if it has it (fp32 always).
std::optional<double> gpu_peak_flops(const GpuNode& node, GpuPrecision precision);
// PyTorch's default where the GPU has it: TF32 convolutions (Ampere and later), else fp32.
GpuPrecision default_gpu_precision(const GpuNode& node);
// bad_input when the GPU lacks the precision's math ("a v100 has no TF32 tensor cores ...").
Expected<void> check_gpu_precision(const GpuNode& node, GpuPrecision precision);

// Fails (bad_input) for a profile that is not a GPU's.
Expected<GpuNode> gpu_node(const records::MachineProfile& profile);

}  // namespace dnntune::model
