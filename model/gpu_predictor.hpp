// model/gpu_predictor.hpp — one data-parallel training iteration on GPU nodes: every layer pass
// timed by the GPU roofline (gpu_layer_time.hpp), gradient sums and the optimizer as streaming
// kernels, the gradients all-reduced NCCL-style in DDP buckets overlapped with the backward pass
// (gpu_communication.hpp), images/s with a band, and the memory check that excludes a batch a
// GPU cannot hold (with the reason).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "model/gpu_layer_time.hpp"
#include "model/gpu_node.hpp"
#include "model/training_configuration.hpp"  // default_fusion_bytes, default_fabric
#include "workloads/graph.hpp"

namespace dnntune::model {

struct GpuConfiguration {
  int gpus_per_node = 1;
  std::int64_t batch_per_gpu = 32;
  int nodes = 1;
  double fusion_bytes = default_fusion_bytes;  // PyTorch DDP's bucket
  std::string fabric = default_fabric;         // between nodes (communication.hpp presets)
  // The numerics: unset, PyTorch's default on this GPU (default_gpu_precision); a prediction's
  // configuration always names the one it used.
  std::optional<GpuPrecision> precision;
  GpuMemoryFormat memory_format = GpuMemoryFormat::contiguous;
};

// What carrying efficiencies over adds to a band (log-sd, in quadrature): from one GPU to another
// by peak ratios, or from a measured precision to an unmeasured one. NVIDIA's published ResNet-50
// figures sit within ~15-20% of such a carry-over from the measured H200 (benchmarks/gpu_accuracy_figures.sh).
constexpr double carried_over_log_sd = 0.15;

// The precision a configuration runs in on `node`.
GpuPrecision resolved_precision(const GpuConfiguration& configuration, const GpuNode& node);

// "8 GPUs x batch 64, 2 nodes" for reports.
std::string describe(const GpuConfiguration& configuration);

struct GpuIterationTerms {
  double forward = 0;
  double backward = 0;  // backward-data + backward-weights
  double gradient_sums = 0;
  double optimizer = 0;
  double communication = 0;          // all buckets' all-reduces
  double exposed_communication = 0;  // what the backward pass did not hide
  // The layer passes by their limit (they add up to forward + backward).
  double compute_bound = 0;
  double memory_bound = 0;
  double overhead_bound = 0;
};

struct GpuPrediction {
  std::string network;
  std::string machine;
  GpuConfiguration configuration;
  bool gpu_has_tf32 = true;  // the GPU has TF32 tensor cores: what a strict-fp32 script must switch off
  double iteration_seconds = 0;
  double images_per_second = 0;      // all GPUs of all nodes
  double images_per_second_low = 0;  // 90% band
  double images_per_second_high = 0;
  double scaling_efficiency = 1;  // over gpus x nodes single GPUs at the same batch
  GpuIterationTerms terms;
  double memory_bytes_needed = 0;  // per GPU
  double memory_bytes_available = 0;
  std::string allreduce_algorithm;
  int buckets = 0;
  std::string bottleneck;
  // Of the layer time, the share whose passes (shape, pass, batch) this GPU's micro-runs timed in
  // this precision, as the CPU answer says it ("42% of its layer time from micro-runs").
  double measured_fraction = 0;
  // "spec" (spec sheet + priors), "partly measured" (a calibration of this very GPU in this
  // precision whose micro-runs timed at least half the layer time: the CPU rule, which keeps
  // "measured" for an answer a real step checked, and no whole GPU step anchors one), "calibrated"
  // (efficiencies fitted on this GPU, in this precision or another, carried to passes it did not
  // time), or "carried over" (measured on another GPU, scaled by the peaks per precision; a wider
  // band).
  std::string confidence = "spec";
  std::string confidence_reason;
  std::string efficiencies_source;
  std::vector<std::string> assumptions;
};

// The configuration fits the node (1 <= gpus <= the node's GPUs, batch 1..max_batch, nodes >= 1,
// fusion > 0, a known fabric, a precision the GPU has) and the batch fits one GPU's memory;
// otherwise bad_input with the reason (for memory: how much it needs and has). with_efficiency = false skips the
// single-GPU
// prediction the scaling efficiency needs (for ranking).
Expected<GpuPrediction> predict_gpu(const workloads::Network& network, const GpuNode& node,
                                    const GpuEfficiencies& efficiencies, const GpuConfiguration& configuration,
                                    bool with_efficiency = true);

}  // namespace dnntune::model
