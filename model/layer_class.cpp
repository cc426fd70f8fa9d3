// model/layer_class.cpp — see layer_class.hpp.
#include "model/layer_class.hpp"

namespace dnntune::model {

LayerClass classify(const workloads::LayerSpec& spec) {
  using workloads::LayerKind;
  switch (spec.kind) {
    case LayerKind::convolution:
      if (spec.groups > 1) return LayerClass::conv_grouped;
      return spec.kernel_h == 1 && spec.kernel_w == 1 ? LayerClass::conv_pointwise : LayerClass::conv_spatial;
    case LayerKind::inner_product: return LayerClass::inner_product;
    case LayerKind::batch_norm: return LayerClass::batch_norm;
    case LayerKind::eltwise: return LayerClass::eltwise;
    case LayerKind::pooling:
    case LayerKind::adaptive_avg_pool: return LayerClass::pooling;
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
  static const char* names[] = {"conv_spatial", "conv_pointwise", "conv_grouped", "inner_product",
                                "batch_norm",   "eltwise",        "pooling",      "add",
                                "concat",       "loss",           "reshape"};
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
