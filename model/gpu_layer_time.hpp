// model/gpu_layer_time.hpp — the time of one layer pass on one GPU: a roofline over the pass's
// FLOPs and bytes (workloads/costs.hpp) with an efficiency per kernel class, a utilisation curve
// (a small batch does not fill the multiprocessors), and the overheads of an eager framework:
// the GPU's gap between back-to-back kernels, and the host's dispatch of each op, which the GPU
// waits for when its kernels are shorter (the GPU runs ahead of the host only while kernels take
// longer than their dispatch). Also the memory one training process holds on its GPU.
//
// The efficiencies are priors (gpu_efficiency_priors: each with its source in gpu_layer_time.cpp)
// until a GPU reference calibration is measured; GpuEfficiencies::source names which a
// prediction used.
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "model/convolution_algorithm.hpp"
#include "model/gpu_node.hpp"
#include "model/gpu_precision.hpp"
#include "workloads/costs.hpp"
#include "workloads/layer.hpp"

namespace dnntune::model {

// Kernels that reach similar fractions of a GPU's peaks (cuDNN / cuBLAS / PyTorch's own).
enum class GpuKernelClass {
  convolution,                    // dense convolution, cuDNN (implicit GEMM, Winograd, FFT)
  convolution_thin,               // few input channels per group (< 16: the first 7x7 on the image)
  convolution_grouped,            // grouped and depth-wise: little reuse, close to memory-bound
  matmul,                         // inner product (cuBLAS GEMM)
  normalization,                  // batch norm: statistics, then normalise (reads its input twice)
  elementwise,                    // ReLU, add, dropout: one streaming pass
  pooling,                        // max, average and adaptive pooling
  data_movement,                  // concat: copies
  loss,                           // softmax + cross-entropy: a few small reductions
  view,                           // flatten: no kernel at all
  convolution_pointwise,          // dense 1x1: a GEMM over the pixels, less reuse than a 3x3 (no Winograd)
  convolution_pointwise_strided,  // dense 1x1 with a stride (ResNet's downsampling shortcut): not a GEMM over
                                  // the input's pixels, cuDNN gathers every other one
  count_
};
constexpr int gpu_kernel_class_count = static_cast<int>(GpuKernelClass::count_);

GpuKernelClass gpu_kernel_class(const workloads::LayerSpec& spec);
std::string gpu_kernel_class_name(GpuKernelClass kernel_class);

struct GpuClassEfficiency {
  std::array<double, 3> compute{};  // of the fp32 peak, per pass (forward, backward-data, backward-weights)
  double memory = 0;                // of the HBM bandwidth
  int kernels_per_pass = 1;         // launches of one pass (0: a view)
  // Each pass's memory efficiency relative to `memory` (forward, backward-data, backward-weights):
  // a pass reads and writes more or less than workloads/costs.hpp counts (batch norm's backward
  // reads its input, the output's gradient and the statistics; max pooling's backward scatters).
  std::array<double, 3> memory_pass_factor{1, 1, 1};
  // Of the precision's own peak where the class runs on it (uses_precision_peak), per pass;
  // indexed by GpuPrecision (the fp32 slot unused: `compute` is strict fp32's).
  std::array<std::array<double, 3>, gpu_precision_count> reduced_compute{};
  // Per pass, the part of a kernel's time that does not grow with the batch (its ramp-up, the
  // last partial wave of tiles, the launch): the intercept of the class's passes measured at two
  // batch sizes (gpu_calibration.cpp). 0 in the priors.
  std::array<double, 3> fixed_seconds{0, 0, 0};
};

// Whether a class's math runs at `precision`'s own peak: convolutions under TF32 (cuDNN's
// allow_tf32, PyTorch's default) and autocast; GEMMs only under autocast (PyTorch keeps fp32
// matmuls in full fp32 since 1.12: cuda.matmul.allow_tf32 False). Streaming kernels stay on the
// CUDA cores whatever the precision (only their bytes shrink under autocast).
bool uses_precision_peak(GpuKernelClass kernel_class, GpuPrecision precision);
// The efficiencies of one pass slot of a class at a precision (against gpu_class_peak's peak).
const std::array<double, 3>& class_compute(const GpuClassEfficiency& efficiency, GpuKernelClass kernel_class,
                                           GpuPrecision precision);
std::array<double, 3>& class_compute(GpuClassEfficiency& efficiency, GpuKernelClass kernel_class,
                                     GpuPrecision precision);
// The peak a class computes at under a precision (the node must have the precision).
double gpu_class_peak(const GpuNode& node, GpuKernelClass kernel_class, GpuPrecision precision);

// How a pass runs: its precision and the activations' memory format.
struct GpuNumerics {
  GpuPrecision precision = GpuPrecision::fp32;
  GpuMemoryFormat memory_format = GpuMemoryFormat::contiguous;
  // A micro-run (calibrate --backend torch-cuda): the pass alone, through the ATen operator it
  // calls. Batch norm differs there: a micro-run times ATen's native_batch_norm, a training step
  // (at::batch_norm, torch.nn.BatchNorm2d) runs cuDNN's (see in_step_normalization_bytes_ratio).
  bool isolated = false;
};

// Batch norm in a training step: cuDNN's kernels stream the data at the rate element-wise
// kernels reach, reading and writing, per pass, this many times the bytes workloads/costs.hpp
// counts: the forward reads its input twice (statistics, then normalise) against the one read
// counted (3 passes over the data for 2 counted); the backward reads x and dy for its channel
// sums, again for dx, and writes dx: the 5 passes costs.hpp splits into backward-data (3) and
// backward-weights (2).
constexpr std::array<double, 3> in_step_normalization_bytes_ratio{1.5, 1.0, 1.0};

// Batch norm on NCHW (contiguous) tensors, in a micro-run (ATen's native_batch_norm) and in a
// step (cuDNN's NCHW kernels) alike: its channel sums (the statistics forward, the sums of dy and
// dy * x-hat backward) run one thread block per channel, so they stream at full rate only from
// this many blocks per multiprocessor on; with fewer channels the sums slow by channels /
// (blocks x multiprocessors) (64 channels on a 132-SM H200: a quarter of the rate). The rest of
// the pass (normalise, the data gradient) is spread over every element. Channels_last kernels
// split each channel's sums over many blocks: no slowdown.
constexpr double native_normalization_blocks_per_sm = 2.0;
// Of the bytes each pass moves, the share that runs in the per-channel blocks: forward 1 of 3
// passes over the data (the statistics; normalising, read and write, is an element-wise kernel),
// backward-data all (ATen's fused NCHW backward sums dy and dy * x-hat and writes dx in the same
// block per channel), backward-weights all (the sums alone).
constexpr std::array<double, 3> native_normalization_per_channel_share{1.0 / 3, 1.0, 1.0};
// What the per-channel sums' block count multiplies an NCHW batch-norm pass's memory time by
// (1 from blocks x multiprocessors channels on).
double native_normalization_slowdown(std::int64_t channels, int multiprocessors, workloads::Pass pass);

struct GpuEfficiencies {
  std::array<GpuClassEfficiency, gpu_kernel_class_count> classes{};
  double kernel_gap_seconds = 0;                 // GPU: idle between two back-to-back kernels
  double dispatch_seconds_per_op = 0;            // host: an eager framework issuing one op (forward or autograd)
  double half_fill_threads_per_sm = 0;           // parallel output elements per SM at which a kernel reaches half speed
  double framework_memory_bytes = 0;             // CUDA context, cuDNN/cuBLAS handles and workspaces, allocator slack
  double log_sd = 0;                             // the band's log-standard deviation for predictions resting on these
  std::string source;                            // "priors (...)" or the calibration they were fitted in
  std::string measured_on;                       // the GPU profile a calibration was measured on ("" for the priors)
  std::vector<std::string> measured_precisions;  // the precisions its micro-runs ran in
  // The layer passes its micro-runs timed (gpu_pass_key: shape, pass and batch): what share of a
  // prediction's layer time rests on this GPU's own passes (none for the priors).
  std::set<std::string> measured_passes;
};

// "conv:ic64ih56iw56oc64kh3kw3ph1|forward|32": one measured pass of a shape at a batch.
std::string gpu_pass_key(const std::string& descriptor, const std::string& pass, std::int64_t batch);

// The documented priors (sources in gpu_layer_time.cpp).
GpuEfficiencies gpu_efficiency_priors();

struct GpuPassTime {
  double seconds = 0;          // what the pass adds to the iteration
  double compute_seconds = 0;  // roofline terms at the utilisation reached
  double memory_seconds = 0;
  double overhead_seconds = 0;           // kernel gaps, or the host's dispatch when that is longer
  double utilisation = 1;                // of the chip, by the parallel work of the layer
  std::string limit;                     // "compute", "memory" or "overhead"
  ConvolutionAlgorithmChoice algorithm;  // what cuDNN runs (implicit GEMM unless a dense convolution saves)
};

// cuDNN's share of peak on the CUDA cores of a GPU generation (GpuNode::architecture), relative
// to the generation the priors come from: 1 for Pascal and later, less for Kepler (sources in
// gpu_layer_time.cpp).
struct GenerationEfficiency {
  double value = 1, low = 1, high = 1;
  const char* source = "the priors' own generation (Pascal and later)";
};
GenerationEfficiency cudnn_generation_efficiency(const std::string& architecture);

// One pass of `spec` at `batch` images per GPU, costing `cost` (layer_cost(layer, batch).pass(pass):
// zero for a backward pass the network does not run, which then costs nothing).
GpuPassTime gpu_pass_time(const workloads::LayerSpec& spec, workloads::Pass pass, const workloads::PassCost& cost,
                          std::int64_t batch, const GpuNode& node, const GpuEfficiencies& efficiencies,
                          const GpuNumerics& numerics = {});

// A streaming step outside the layers (gradient sums, the optimizer update): memory-bound.
double gpu_streaming_seconds(const workloads::PassCost& cost, int kernels, const GpuNode& node,
                             const GpuEfficiencies& efficiencies);

// Bytes one training process holds on its GPU at `batch`: activations kept for backward,
// weights, gradients, momentum (NetworkCost::training_memory_bytes) and the framework's own.
// Under autocast (bf16, fp16) the kept activations are 2 bytes and a 2-byte copy of the weights
// joins the fp32 weights, gradients and momentum.
double gpu_training_memory_bytes(const workloads::NetworkCost& cost, const GpuEfficiencies& efficiencies,
                                 GpuPrecision precision = GpuPrecision::fp32);

}  // namespace dnntune::model
