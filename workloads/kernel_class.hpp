// workloads/kernel_class.hpp — the one taxonomy of layer kernels, shared by the calibration plan
// (calibrate/plan.*) and the cost model (model/layer_class.*).
//
// Two levels, one table (kernel_class.cpp):
//   KernelShape  what a layer's shape alone picks: the kind refined where kernels differ (1x1 /
//                3x3 / other / grouped convolutions, strided or not; max / average pooling ...).
//                The plan samples layers shape by shape so each gets thread-scaling curves.
//   KernelClass  the classes that share cost-model parameters. Kernels of one class reach
//                similar fractions of peak and scale alike over threads (a 3x3 convolution is
//                compute-bound and scales well; batch norm streams memory; a depth-wise
//                convolution is neither), so the model fits efficiency, thread scaling and
//                overhead per class, not per layer. Each shape belongs to one class; a backend's
//                dispatch rules (workloads/backends.hpp) may move a layer to another class
//                (conv_native) when the framework picks a different kernel.
// The names are on disk (calibration parameter names "conv_spatial.efficiency", the plan's
// class counts): they never change.
#pragma once

#include <optional>
#include <string_view>

#include "workloads/layer.hpp"

namespace dnntune::workloads {

enum class KernelClass {
  conv_spatial,    // dense convolution with a kernel larger than 1x1
  conv_pointwise,  // dense 1x1 convolution (a GEMM)
  conv_grouped,    // grouped and depth-wise convolution
  conv_native,     // a convolution libtorch runs on its own im2col + GEMM kernel, not oneDNN's
  inner_product,
  batch_norm,
  eltwise,           // ReLU, ReLU6
  pooling_max,       // max pooling (it also records where each maximum was)
  pooling_average,   // average pooling over a sliding window
  pooling_adaptive,  // adaptive average pooling (the global pooling before a classifier)
  add,
  concat,
  loss,     // softmax + cross-entropy
  reshape,  // input, flatten and dropout: views and masks
  count_    // number of classes (not a class)
};
constexpr int kernel_class_count = static_cast<int>(KernelClass::count_);

enum class KernelShape {
  conv1x1,
  conv1x1_strided,
  conv3x3,
  conv3x3_strided,
  conv_other,
  conv_grouped,
  batch_norm,
  relu,
  relu6,
  maxpool,
  avgpool,
  adaptive_avg_pool,
  linear,
  add,
  concat,
  dropout,
  softmax_loss,
  input,
  flatten,
  count_  // number of shapes (not a shape)
};
constexpr int kernel_shape_count = static_cast<int>(KernelShape::count_);

// The shape `spec` picks (the one switch on the layer kind for classification).
KernelShape kernel_shape(const LayerSpec& spec);

// "conv1x1", "conv3x3_strided", "relu6", "linear", "softmax_loss", ... ("?" out of range).
std::string_view shape_name(KernelShape shape);
// The class a shape belongs to before any backend's dispatch rule.
KernelClass shape_class(KernelShape shape);

// "conv_spatial", "pooling_max", ... ("?" out of range); and back (nullopt when unknown).
std::string_view kernel_class_name(KernelClass kernel_class);
std::optional<KernelClass> kernel_class_named(std::string_view name);

}  // namespace dnntune::workloads
