// model/layer_class.cpp — see layer_class.hpp.
#include "model/layer_class.hpp"

namespace dnntune::model {

namespace {

// libtorch 1.13 sends a CPU float convolution to oneDNN only when ConvParams::use_mkldnn
// (aten/src/ATen/native/ConvUtils.h) holds:
//   (strided || dilated || batch >= 16 || kernel not 1x1 || more than one thread) &&
//   (grouped || kernel wider than 3x3 || batch > 1 || input of more than 20480 elements);
// otherwise its own im2col + GEMM kernel runs it, in every pass. Measured on the 2-core dev VM:
// unstrided 1x1 convolutions at batch 8 on one thread ran at 5-8 GFLOP/s against 150-190 at
// batch 16 or on two threads. One class holding both kernels fitted neither (136% held-out error).
bool torch_runs_own_convolution(const workloads::LayerSpec& spec, std::int64_t batch, int threads) {
  const bool strided = spec.stride_h > 1 || spec.stride_w > 1;
  const bool dilated = spec.dilation_h > 1 || spec.dilation_w > 1;
  const bool pointwise = spec.kernel_h == 1 && spec.kernel_w == 1;
  const std::int64_t input_elements = batch * spec.input.elements();
  const bool first = strided || dilated || batch >= 16 || !pointwise || threads > 1;
  const bool second = spec.groups > 1 || (spec.kernel_h > 3 && spec.kernel_w > 3) || batch > 1 || input_elements > 20480;
  return !(first && second);
}

}  // namespace

LayerClass classify(const workloads::LayerSpec& spec, const std::string& backend, std::int64_t batch, int threads) {
  using workloads::LayerKind;
  switch (spec.kind) {
    case LayerKind::convolution:
      if (backend == "torch" && torch_runs_own_convolution(spec, batch, threads)) return LayerClass::conv_native;
      if (spec.groups > 1) return LayerClass::conv_grouped;
      return spec.kernel_h == 1 && spec.kernel_w == 1 ? LayerClass::conv_pointwise : LayerClass::conv_spatial;
    case LayerKind::inner_product: return LayerClass::inner_product;
    case LayerKind::batch_norm: return LayerClass::batch_norm;
    case LayerKind::eltwise: return LayerClass::eltwise;
    case LayerKind::pooling:
      return spec.pool == workloads::PoolAlgorithm::max ? LayerClass::pooling_max : LayerClass::pooling_average;
    case LayerKind::adaptive_avg_pool: return LayerClass::pooling_adaptive;
    case LayerKind::add: return LayerClass::add;
    case LayerKind::concat: return LayerClass::concat;
    case LayerKind::softmax_cross_entropy: return LayerClass::loss;
    case LayerKind::input:
    case LayerKind::flatten:
    case LayerKind::dropout: return LayerClass::reshape;
  }
  return LayerClass::reshape;
}

std::string class_name(LayerClass layer_class) {
  static const char* names[] = {"conv_spatial",     "conv_pointwise",  "conv_grouped", "conv_native",
                                "inner_product",    "batch_norm",      "eltwise",      "pooling_max",
                                "pooling_average",  "pooling_adaptive", "add",         "concat",
                                "loss",             "reshape"};
  const int index = static_cast<int>(layer_class);
  return index >= 0 && index < layer_class_count ? names[index] : "?";
}

int pass_index(workloads::Pass pass) {
  switch (pass) {
    case workloads::Pass::forward: return 0;
    case workloads::Pass::backward_data: return 1;
    case workloads::Pass::backward_weights: return 2;
  }
  return 0;
}

}  // namespace dnntune::model
