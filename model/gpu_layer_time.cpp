// model/gpu_layer_time.cpp — see gpu_layer_time.hpp. The priors and their sources are here.
#include "model/gpu_layer_time.hpp"

#include <algorithm>

#include "model/convolution_algorithm.hpp"

namespace dnntune::model {
namespace {

struct ClassRow {
  GpuKernelClass kernel_class;
  const char* name;
  GpuClassEfficiency prior;
};

// One registry row per class: its name and its prior efficiencies. Sources (fp32, cuDNN 7/8 era):
// * Dense convolutions: Baidu DeepBench's training convolutions on P100/V100 reach 55-80% of the
//   fp32 peak for ResNet/VGG-sized problems (counted as direct convolution FLOPs, so Winograd
//   kernels can pass 100%); backward-weights is the slowest of the three there, as in Jia et al.,
//   "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking" (2018).
// * Thin convolutions (3 input channels): DeepBench's first-layer shapes run at 25-40% of peak.
// * Grouped / depth-wise: Qin et al., "Diagonalwise Refactorization" (2018): cuDNN's depth-wise
//   kernels reach a few percent of peak; they are memory-bound in practice.
// * GEMM: DeepBench's fp32 GEMMs at training sizes 60-85% of peak; a classifier at batch 32-256
//   is on the small side.
// * Streaming kernels: BabelStream on V100/A100 reaches ~85% of HBM peak; PyTorch's element-wise
//   kernels ~80%; cuDNN batch norm reads its input twice (statistics, then normalise) against the
//   one read counted in workloads/costs.hpp, so ~half; pooling and concat ~60-70%; the loss is a
//   handful of small reductions.
const ClassRow class_rows[] = {
    {GpuKernelClass::convolution, "convolution", {{0.70, 0.65, 0.55}, 0.70, 1}},
    {GpuKernelClass::convolution_thin, "convolution_thin", {{0.35, 0.35, 0.30}, 0.60, 1}},
    {GpuKernelClass::convolution_grouped, "convolution_grouped", {{0.08, 0.08, 0.05}, 0.50, 1}},
    {GpuKernelClass::matmul, "matmul", {{0.55, 0.55, 0.50}, 0.70, 1}},
    {GpuKernelClass::normalization, "normalization", {{0.30, 0.30, 0.30}, 0.50, 1}},
    {GpuKernelClass::elementwise, "elementwise", {{0.30, 0.30, 0.30}, 0.80, 1}},
    {GpuKernelClass::pooling, "pooling", {{0.30, 0.30, 0.30}, 0.60, 1}},
    {GpuKernelClass::data_movement, "data_movement", {{0.30, 0.30, 0.30}, 0.70, 1}},
    {GpuKernelClass::loss, "loss", {{0.10, 0.10, 0.10}, 0.30, 2}},
    {GpuKernelClass::view, "view", {{1, 1, 1}, 1, 0}},
    {GpuKernelClass::convolution_pointwise, "convolution_pointwise", {{0.70, 0.65, 0.55}, 0.70, 1}},
    // A strided 1x1 (no source of its own): the pointwise prior until a calibration measures it.
    {GpuKernelClass::convolution_pointwise_strided, "convolution_pointwise_strided", {{0.70, 0.65, 0.55}, 0.70, 1}},
};
static_assert(sizeof class_rows / sizeof class_rows[0] == gpu_kernel_class_count, "one row per class");

// Priors against a precision's own (tensor-core) peak, the same for TF32, bf16 and fp16: a
// tensor-core kernel reaches a smaller share of its much higher peak than an fp32 kernel of its
// own, since the loads that feed it stay the same (DeepBench's fp16 training convolutions on V100
// reach 30-50% of the 125 TF; NVIDIA's A100 TF32/AMP ResNet-50 figures imply about a third).
// A fitted calibration replaces them; a precision it did not measure inherits the share of peak
// fitted for a measured tensor precision (gpu_calibration.cpp).
struct TensorPrior {
  GpuKernelClass kernel_class;
  std::array<double, 3> compute;
};
const TensorPrior tensor_priors[] = {
    {GpuKernelClass::convolution, {0.35, 0.30, 0.28}},
    {GpuKernelClass::convolution_thin, {0.10, 0.10, 0.08}},
    {GpuKernelClass::convolution_grouped, {0.01, 0.01, 0.01}},
    {GpuKernelClass::convolution_pointwise, {0.35, 0.30, 0.28}},
    {GpuKernelClass::convolution_pointwise_strided, {0.35, 0.30, 0.28}},
    {GpuKernelClass::matmul, {0.45, 0.45, 0.40}},
};

// cuDNN's share of peak on a GPU generation, against the generation the priors come from
// (DeepBench's P100 and V100; the H200 reference for tensor cores): CUDA-core math only.
struct GenerationRow {
  const char* architecture;
  GenerationEfficiency efficiency;
};
const GenerationRow generation_rows[] = {
    // Kepler (K80's GK210): TensorFlow's published benchmarks (tensorflow.org, "Benchmarks", May
    // 2017: tf_cnn_benchmarks, CUDA 8 / cuDNN 5.1, batch 32, one GPU, synthetic data, GPU Boost
    // left on) trained ResNet-50, ResNet-152 and Inception-v3 at 49.5, 20.0 and 29.3 images/s on
    // one K80 die and 195, 82.7 and 128 on one P100. With the K80 at its sustained clock
    // (data/machines/k80.json) and this model's P100 as the reference, Kepler's kernels reach
    // this share of what the priors give Pascal: the value reproduces the three networks' median
    // K80/P100 ratio, the range their lowest and highest. Kepler has half Maxwell's and Pascal's
    // registers and shared memory per FP32 lane, so its SGEMM-like kernels keep fewer operands
    // on chip (NVIDIA's Kepler GK110/GK210 and Pascal GP100 whitepapers).
    {"kepler",
     {0.625, 0.54, 0.65,
      "TensorFlow's published benchmarks (2017, cuDNN 5.1): one K80 die against one P100 on ResNet-50, "
      "ResNet-152 and Inception-v3 at batch 32, with the K80 at its sustained clock"}},
};

const ClassRow& row(GpuKernelClass kernel_class) { return class_rows[static_cast<int>(kernel_class)]; }

int pass_slot(workloads::Pass pass) {
  switch (pass) {
    case workloads::Pass::forward:
      return 0;
    case workloads::Pass::backward_data:
      return 1;
    case workloads::Pass::backward_weights:
      return 2;
  }
  return 0;
}

// The parallel work a pass spreads over the multiprocessors: the layer's larger tensor (its
// input or its output) for the whole batch. Backward passes work on the same tensors.
double parallel_elements(const workloads::LayerSpec& spec, std::int64_t batch) {
  const auto output = workloads::infer_output_shape(spec);
  const double output_elements = output ? static_cast<double>(output->elements()) : 0.0;
  return static_cast<double>(batch) * std::max(output_elements, static_cast<double>(spec.input.elements()));
}

}  // namespace

GpuKernelClass gpu_kernel_class(const workloads::LayerSpec& spec) {
  using workloads::LayerKind;
  switch (spec.kind) {
    case LayerKind::convolution: {
      const std::int64_t groups = std::max<std::int64_t>(1, spec.groups);
      if (groups > 1) return GpuKernelClass::convolution_grouped;
      if (spec.input.channels < 16) return GpuKernelClass::convolution_thin;
      if (spec.kernel_h != 1 || spec.kernel_w != 1) return GpuKernelClass::convolution;
      return spec.stride_h > 1 || spec.stride_w > 1 ? GpuKernelClass::convolution_pointwise_strided
                                                    : GpuKernelClass::convolution_pointwise;
    }
    case LayerKind::inner_product:
      return GpuKernelClass::matmul;
    case LayerKind::batch_norm:
      return GpuKernelClass::normalization;
    case LayerKind::eltwise:
    case LayerKind::add:
    case LayerKind::dropout:
      return GpuKernelClass::elementwise;
    case LayerKind::pooling:
    case LayerKind::adaptive_avg_pool:
      return GpuKernelClass::pooling;
    case LayerKind::concat:
      return GpuKernelClass::data_movement;
    case LayerKind::softmax_cross_entropy:
      return GpuKernelClass::loss;
    case LayerKind::input:
    case LayerKind::flatten:
      return GpuKernelClass::view;
  }
  return GpuKernelClass::view;
}

std::string gpu_kernel_class_name(GpuKernelClass kernel_class) { return row(kernel_class).name; }

bool uses_precision_peak(GpuKernelClass kernel_class, GpuPrecision precision) {
  switch (kernel_class) {
    case GpuKernelClass::convolution:
    case GpuKernelClass::convolution_thin:
    case GpuKernelClass::convolution_grouped:
    case GpuKernelClass::convolution_pointwise:
    case GpuKernelClass::convolution_pointwise_strided:
      return precision != GpuPrecision::fp32;
    case GpuKernelClass::matmul:
      return is_mixed_precision(precision);
    default:
      return false;
  }
}

const std::array<double, 3>& class_compute(const GpuClassEfficiency& efficiency, GpuKernelClass kernel_class,
                                           GpuPrecision precision) {
  return uses_precision_peak(kernel_class, precision) ? efficiency.reduced_compute[static_cast<int>(precision)]
                                                      : efficiency.compute;
}

std::array<double, 3>& class_compute(GpuClassEfficiency& efficiency, GpuKernelClass kernel_class,
                                     GpuPrecision precision) {
  return uses_precision_peak(kernel_class, precision) ? efficiency.reduced_compute[static_cast<int>(precision)]
                                                      : efficiency.compute;
}

double gpu_class_peak(const GpuNode& node, GpuKernelClass kernel_class, GpuPrecision precision) {
  if (!uses_precision_peak(kernel_class, precision)) return node.fp32_flops;
  return gpu_peak_flops(node, precision).value_or(node.fp32_flops);
}

GpuEfficiencies gpu_efficiency_priors() {
  GpuEfficiencies efficiencies;
  for (const ClassRow& class_row : class_rows) {
    GpuClassEfficiency& efficiency = efficiencies.classes[static_cast<int>(class_row.kernel_class)];
    efficiency = class_row.prior;
    for (auto& reduced : efficiency.reduced_compute) reduced = efficiency.compute;
  }
  for (const TensorPrior& prior : tensor_priors)
    for (int precision = 1; precision < gpu_precision_count; ++precision)
      efficiencies.classes[static_cast<int>(prior.kernel_class)].reduced_compute[precision] = prior.compute;
  // Back-to-back kernel launches leave the GPU idle ~2-4 us (CUDA launch latency on Volta to
  // Hopper, as Nsight timelines of eager PyTorch show).
  efficiencies.kernel_gap_seconds = 3e-6;
  // Eager PyTorch spends ~10 us of host time per op, forward or autograd (Horace He, "Making Deep
  // Learning Go Brrrr From First Principles", 2022; PyTorch's own profiler on small ops).
  efficiencies.dispatch_seconds_per_op = 10e-6;
  // A kernel needs a few waves of threads to hide latency: half speed at 1024 parallel output
  // elements per SM (2048 resident threads per SM on Volta to Hopper, about half occupied).
  efficiencies.half_fill_threads_per_sm = 1024;
  // A CUDA context with cuDNN and cuBLAS loaded holds 0.5-1 GB; workspaces and the caching
  // allocator's slack add to it.
  efficiencies.framework_memory_bytes = 1.0 * 1024 * 1024 * 1024;
  // Efficiencies from other studies' kernels, not this machine's: wider than a fitted model's.
  efficiencies.log_sd = 0.30;
  efficiencies.source =
      "priors (no GPU reference calibration measured yet; model/gpu_layer_time.cpp names their sources)";
  return efficiencies;
}

GenerationEfficiency cudnn_generation_efficiency(const std::string& architecture) {
  for (const GenerationRow& generation : generation_rows)
    if (architecture == generation.architecture) return generation.efficiency;
  return {};
}

double native_normalization_slowdown(std::int64_t channels, int multiprocessors, workloads::Pass pass) {
  const double filled = std::min(1.0, static_cast<double>(std::max<std::int64_t>(1, channels)) /
                                          (native_normalization_blocks_per_sm * std::max(1, multiprocessors)));
  const double share = native_normalization_per_channel_share[pass_slot(pass)];
  return share / filled + (1 - share);
}

GpuPassTime gpu_pass_time(const workloads::LayerSpec& spec, workloads::Pass pass, const workloads::PassCost& cost,
                          std::int64_t batch, const GpuNode& node, const GpuEfficiencies& efficiencies,
                          const GpuNumerics& numerics) {
  GpuPassTime time;
  const GpuKernelClass kernel_class = gpu_kernel_class(spec);
  const GpuClassEfficiency& efficiency = efficiencies.classes[static_cast<int>(kernel_class)];
  if ((cost.flops == 0 && cost.bytes == 0) || efficiency.kernels_per_pass == 0) {
    time.limit = "none";
    return time;  // a pass the network does not run, or a view
  }
  const double work = parallel_elements(spec, batch);
  const double half_fill = efficiencies.half_fill_threads_per_sm * node.multiprocessors;
  time.utilisation = work / (work + half_fill);
  // A GPU without tensor cores (P100's fp16) runs the precision on its CUDA cores at the fp32
  // kernels' share of that peak.
  const GpuPrecision precision = numerics.precision;
  const bool tensor_cores = uses_precision_peak(kernel_class, precision) && node.tensor_flops.has_value();
  const double peak = gpu_class_peak(node, kernel_class, precision);
  const double compute_efficiency =
      (tensor_cores ? class_compute(efficiency, kernel_class, precision) : efficiency.compute)[pass_slot(pass)];
  // CUDA-core math runs at its generation's share; tensor cores are the reference's own.
  const double generation = tensor_cores ? 1.0 : cudnn_generation_efficiency(node.architecture).value;
  // A dense convolution may run an algorithm that does fewer multiplications than its FLOPs.
  if (kernel_class == GpuKernelClass::convolution)
    time.algorithm = cudnn_convolution_algorithm(spec, precision, node.architecture);
  time.compute_seconds = static_cast<double>(cost.flops) / time.algorithm.speedup /
                         (peak * compute_efficiency * generation * time.utilisation);
  // Autocast halves the activations' bytes; tensor-core convolutions on contiguous (NCHW)
  // tensors add cuDNN's transposes to and from NHWC, about one more pass over the data.
  double bytes = static_cast<double>(cost.bytes) * activation_bytes_ratio(precision);
  const bool convolution = uses_precision_peak(kernel_class, GpuPrecision::tf32);
  if (convolution && is_mixed_precision(precision) && numerics.memory_format == GpuMemoryFormat::contiguous) bytes *= 2;
  double memory_rate = node.memory_bandwidth * efficiency.memory * efficiency.memory_pass_factor[pass_slot(pass)];
  if (kernel_class == GpuKernelClass::normalization && !numerics.isolated) {
    const GpuClassEfficiency& streaming = efficiencies.classes[static_cast<int>(GpuKernelClass::elementwise)];
    memory_rate = node.memory_bandwidth * streaming.memory / in_step_normalization_bytes_ratio[pass_slot(pass)];
  }
  // Native and cuDNN batch norm alike sum each channel of an NCHW tensor in one block; NHWC kernels
  // split every channel's sums over many blocks.
  if (kernel_class == GpuKernelClass::normalization && numerics.memory_format == GpuMemoryFormat::contiguous)
    memory_rate /= native_normalization_slowdown(spec.input.channels, node.multiprocessors, pass);
  time.memory_seconds = bytes / (memory_rate * time.utilisation);
  const double kernels = efficiency.kernels_per_pass;
  const double on_gpu = std::max(time.compute_seconds, time.memory_seconds) +
                        efficiency.fixed_seconds[pass_slot(pass)] + kernels * efficiencies.kernel_gap_seconds;
  const double on_host = kernels * efficiencies.dispatch_seconds_per_op;
  time.seconds = std::max(on_gpu, on_host);
  time.overhead_seconds = time.seconds - std::max(time.compute_seconds, time.memory_seconds);
  time.limit = on_host > on_gpu ? "overhead" : time.compute_seconds >= time.memory_seconds ? "compute" : "memory";
  return time;
}

double gpu_streaming_seconds(const workloads::PassCost& cost, int kernels, const GpuNode& node,
                             const GpuEfficiencies& efficiencies) {
  if (cost.bytes == 0 && cost.flops == 0) return 0;
  const double memory_efficiency = efficiencies.classes[static_cast<int>(GpuKernelClass::elementwise)].memory;
  const double on_gpu = static_cast<double>(cost.bytes) / (node.memory_bandwidth * memory_efficiency) +
                        kernels * efficiencies.kernel_gap_seconds;
  return std::max(on_gpu, kernels * efficiencies.dispatch_seconds_per_op);
}

double gpu_training_memory_bytes(const workloads::NetworkCost& cost, const GpuEfficiencies& efficiencies,
                                 GpuPrecision precision) {
  // NetworkCost::training_memory_bytes: 1.1 x (activations + 16 bytes per parameter).
  const double ratio = activation_bytes_ratio(precision);
  const double activations_saved = 1.1 * (1 - ratio) * static_cast<double>(cost.activation_bytes_kept);
  const double half_weights = is_mixed_precision(precision) ? 1.1 * 2.0 * static_cast<double>(cost.parameters) : 0.0;
  return cost.training_memory_bytes() - activations_saved + half_weights + efficiencies.framework_memory_bytes;
}

std::string gpu_pass_key(const std::string& descriptor, const std::string& pass, std::int64_t batch) {
  return descriptor + "|" + pass + "|" + std::to_string(batch);
}

}  // namespace dnntune::model
