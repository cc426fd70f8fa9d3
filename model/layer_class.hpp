// model/layer_class.hpp — the classes of layers that share cost-model parameters. Kernels of
// one class reach similar fractions of peak and scale alike over threads (a 3x3 convolution
// is compute-bound and scales well; batch norm streams memory; a depth-wise convolution is
// neither), so the model fits efficiency, thread scaling and overhead per class, not per layer.
#pragma once

#include <cstdint>
#include <string>

#include "workloads/costs.hpp"
#include "workloads/layer.hpp"

namespace dnntune::model {

enum class LayerClass {
  conv_spatial,    // dense convolution with a kernel larger than 1x1
  conv_pointwise,  // dense 1x1 convolution (a GEMM)
  conv_grouped,    // grouped and depth-wise convolution
  conv_native,     // a convolution libtorch runs on its own im2col + GEMM kernel, not oneDNN's
  inner_product,
  batch_norm,
  eltwise,         // ReLU, ReLU6
  pooling_max,       // max pooling (it also records where each maximum was)
  pooling_average,   // average pooling over a sliding window
  pooling_adaptive,  // adaptive average pooling (the global pooling before a classifier)
  add,
  concat,
  loss,            // softmax + cross-entropy
  reshape,         // flatten and dropout: views and masks
  count_           // number of classes (not a class)
};
constexpr int layer_class_count = static_cast<int>(LayerClass::count_);
constexpr int pass_count = 3;

// The class of `spec` as `backend` runs it at `batch` per process on `threads` threads: the
// framework's dispatch decides the kernel, and with it the class (see conv_native).
LayerClass classify(const workloads::LayerSpec& spec, const std::string& backend, std::int64_t batch, int threads);
std::string class_name(LayerClass layer_class);
int pass_index(workloads::Pass pass);

}  // namespace dnntune::model
