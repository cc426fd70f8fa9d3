// workloads/kernel_class.cpp — the kernel taxonomy's table: each shape's name and class, each
// class's name (see kernel_class.hpp).
#include "workloads/kernel_class.hpp"

#include <array>

namespace dnntune::workloads {

namespace {

struct ShapeRow {
  KernelShape shape;
  std::string_view name;
  KernelClass kernel_class;
};

// One row per shape, in enum order (checked below).
constexpr std::array<ShapeRow, kernel_shape_count> shape_table{{
    {KernelShape::conv1x1, "conv1x1", KernelClass::conv_pointwise},
    {KernelShape::conv1x1_strided, "conv1x1_strided", KernelClass::conv_pointwise},
    {KernelShape::conv3x3, "conv3x3", KernelClass::conv_spatial},
    {KernelShape::conv3x3_strided, "conv3x3_strided", KernelClass::conv_spatial},
    {KernelShape::conv_other, "conv_other", KernelClass::conv_spatial},
    {KernelShape::conv_grouped, "conv_grouped", KernelClass::conv_grouped},
    {KernelShape::batch_norm, "batch_norm", KernelClass::batch_norm},
    {KernelShape::relu, "relu", KernelClass::eltwise},
    {KernelShape::relu6, "relu6", KernelClass::eltwise},
    {KernelShape::maxpool, "maxpool", KernelClass::pooling_max},
    {KernelShape::avgpool, "avgpool", KernelClass::pooling_average},
    {KernelShape::adaptive_avg_pool, "adaptive_avg_pool", KernelClass::pooling_adaptive},
    {KernelShape::linear, "linear", KernelClass::inner_product},
    {KernelShape::add, "add", KernelClass::add},
    {KernelShape::concat, "concat", KernelClass::concat},
    {KernelShape::dropout, "dropout", KernelClass::reshape},
    {KernelShape::softmax_loss, "softmax_loss", KernelClass::loss},
    {KernelShape::input, "input", KernelClass::reshape},
    {KernelShape::flatten, "flatten", KernelClass::reshape},
}};

constexpr std::array<std::string_view, kernel_class_count> class_names{
    "conv_spatial", "conv_pointwise",  "conv_grouped",     "conv_native", "inner_product", "batch_norm", "eltwise",
    "pooling_max",  "pooling_average", "pooling_adaptive", "add",         "concat",        "loss",       "reshape"};

constexpr bool rows_in_enum_order() {
  for (std::size_t index = 0; index < shape_table.size(); ++index)
    if (static_cast<std::size_t>(shape_table[index].shape) != index) return false;
  return true;
}
static_assert(rows_in_enum_order(), "shape_table must list the shapes in KernelShape order");

}  // namespace

KernelShape kernel_shape(const LayerSpec& spec) {
  switch (spec.kind) {
    case LayerKind::convolution: {
      if (spec.groups > 1) return KernelShape::conv_grouped;
      const bool strided = spec.stride_h > 1 || spec.stride_w > 1;
      if (spec.kernel_h == 1 && spec.kernel_w == 1)
        return strided ? KernelShape::conv1x1_strided : KernelShape::conv1x1;
      if (spec.kernel_h == 3 && spec.kernel_w == 3)
        return strided ? KernelShape::conv3x3_strided : KernelShape::conv3x3;
      return KernelShape::conv_other;
    }
    case LayerKind::eltwise:
      return spec.eltwise == EltwiseAlgorithm::relu ? KernelShape::relu : KernelShape::relu6;
    case LayerKind::pooling:
      return spec.pool == PoolAlgorithm::max ? KernelShape::maxpool : KernelShape::avgpool;
    case LayerKind::inner_product:
      return KernelShape::linear;
    case LayerKind::softmax_cross_entropy:
      return KernelShape::softmax_loss;
    case LayerKind::batch_norm:
      return KernelShape::batch_norm;
    case LayerKind::adaptive_avg_pool:
      return KernelShape::adaptive_avg_pool;
    case LayerKind::add:
      return KernelShape::add;
    case LayerKind::concat:
      return KernelShape::concat;
    case LayerKind::dropout:
      return KernelShape::dropout;
    case LayerKind::input:
      return KernelShape::input;
    case LayerKind::flatten:
      return KernelShape::flatten;
  }
  return KernelShape::input;
}

std::string_view shape_name(KernelShape shape) {
  const auto index = static_cast<std::size_t>(shape);
  return index < shape_table.size() ? shape_table[index].name : "?";
}

KernelClass shape_class(KernelShape shape) {
  const auto index = static_cast<std::size_t>(shape);
  return index < shape_table.size() ? shape_table[index].kernel_class : KernelClass::reshape;
}

std::string_view kernel_class_name(KernelClass kernel_class) {
  const auto index = static_cast<std::size_t>(kernel_class);
  return index < class_names.size() ? class_names[index] : "?";
}

std::optional<KernelClass> kernel_class_named(std::string_view name) {
  for (std::size_t index = 0; index < class_names.size(); ++index)
    if (class_names[index] == name) return static_cast<KernelClass>(index);
  return std::nullopt;
}

}  // namespace dnntune::workloads
