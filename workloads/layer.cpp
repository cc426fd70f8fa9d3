// workloads/layer.cpp — layer kinds, shape inference with PyTorch's rules, parameter counts
// (see layer.hpp). Descriptor printing and parsing live in descriptor.cpp.
#include "workloads/layer.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace dnntune::workloads {
namespace {

// Bound on any one layer's per-image work (elements, multiply-adds, window reads), so that
// every cost at max_batch, times the few bytes or FLOPs per unit, stays far below 2^63.
constexpr double max_work_per_image = 68719476736.0;  // 2^36: over 30x VGG-16's largest layer
// Bound on every single size or count in a spec, so that products of two are safe to form
// and per-axis loops (pooling windows) stay short.
constexpr std::int64_t max_dimension = 1 << 24;

std::string number(std::int64_t value) { return std::to_string(value); }

std::string pair(std::int64_t h, std::int64_t w) { return number(h) + "x" + number(w); }

Expected<Shape> check_shape(const Shape& shape, const char* what) {
  for (const std::int64_t size : {shape.channels, shape.height, shape.width})
    if (size < 1 || size > max_dimension)
      return bad_input(std::string(what) + " shape " + to_string(shape) + ": every size must be between 1 and 2^24");
  return shape;
}

Expected<void> check_range(std::int64_t value, std::int64_t low, const char* name) {
  if (value < low || value > max_dimension)
    return bad_input(std::string(name) + " " + number(value) + " out of range (" + number(low) + " to 2^24)");
  return {};
}

// PyTorch's output size of a convolution or pooling window along one axis
// (aten/src/ATen/native/Pool.h pooling_output_shape; convolutions always floor).
Expected<std::int64_t> window_output_size(std::int64_t input, std::int64_t kernel, std::int64_t stride,
                                          std::int64_t pad, std::int64_t dilation, bool ceil_mode, const char* axis) {
  const std::int64_t span = dilation * (kernel - 1) + 1;
  if (input + 2 * pad < span)
    return bad_input(std::string("kernel ") + number(span) + " (with dilation) is larger than the " + axis + " " +
                     number(input) + " plus padding " + number(pad) + " on each side");
  std::int64_t output = (input + 2 * pad - span + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  // With ceil_mode the last window must start inside the input or its left padding.
  if (ceil_mode && (output - 1) * stride >= input + pad) --output;
  return output;
}

Expected<Shape> convolution_output(const LayerSpec& spec) {
  for (const auto& [value, low, name] :
       {std::tuple{spec.output_channels, std::int64_t{1}, "output channels"},
        std::tuple{spec.kernel_h, std::int64_t{1}, "kernel height"},
        std::tuple{spec.kernel_w, std::int64_t{1}, "kernel width"},
        std::tuple{spec.stride_h, std::int64_t{1}, "stride"}, std::tuple{spec.stride_w, std::int64_t{1}, "stride"},
        std::tuple{spec.pad_h, std::int64_t{0}, "padding"}, std::tuple{spec.pad_w, std::int64_t{0}, "padding"},
        std::tuple{spec.dilation_h, std::int64_t{1}, "dilation"},
        std::tuple{spec.dilation_w, std::int64_t{1}, "dilation"}, std::tuple{spec.groups, std::int64_t{1}, "groups"}})
    if (auto ok = check_range(value, low, name); !ok) return ok.error();
  if (spec.input.channels % spec.groups != 0 || spec.output_channels % spec.groups != 0)
    return bad_input("groups " + number(spec.groups) + " must divide input channels " + number(spec.input.channels) +
                     " and output channels " + number(spec.output_channels));
  const auto height = window_output_size(spec.input.height, spec.kernel_h, spec.stride_h, spec.pad_h, spec.dilation_h,
                                         false, "input height");
  if (!height) return height.error();
  const auto width = window_output_size(spec.input.width, spec.kernel_w, spec.stride_w, spec.pad_w, spec.dilation_w,
                                        false, "input width");
  if (!width) return width.error();
  return Shape{spec.output_channels, *height, *width};
}

Expected<Shape> pooling_output(const LayerSpec& spec) {
  for (const auto& [value, low, name] :
       {std::tuple{spec.kernel_h, std::int64_t{1}, "kernel height"},
        std::tuple{spec.kernel_w, std::int64_t{1}, "kernel width"},
        std::tuple{spec.stride_h, std::int64_t{1}, "stride"}, std::tuple{spec.stride_w, std::int64_t{1}, "stride"},
        std::tuple{spec.pad_h, std::int64_t{0}, "padding"}, std::tuple{spec.pad_w, std::int64_t{0}, "padding"}})
    if (auto ok = check_range(value, low, name); !ok) return ok.error();
  // PyTorch refuses windows that could lie entirely in the padding.
  if (2 * spec.pad_h > spec.kernel_h || 2 * spec.pad_w > spec.kernel_w)
    return bad_input("padding " + pair(spec.pad_h, spec.pad_w) + " must be at most half the kernel " +
                     pair(spec.kernel_h, spec.kernel_w));
  const auto height = window_output_size(spec.input.height, spec.kernel_h, spec.stride_h, spec.pad_h, 1, spec.ceil_mode,
                                         "input height");
  if (!height) return height.error();
  const auto width =
      window_output_size(spec.input.width, spec.kernel_w, spec.stride_w, spec.pad_w, 1, spec.ceil_mode, "input width");
  if (!width) return width.error();
  return Shape{spec.input.channels, *height, *width};
}

Expected<Shape> vector_input(const LayerSpec& spec, const char* what) {
  if (spec.input.height != 1 || spec.input.width != 1)
    return bad_input(std::string(what) + " needs a flattened input (C x 1 x 1), got " + to_string(spec.input) +
                     " (put a flatten layer before it)");
  return spec.input;
}

Expected<Shape> shape_by_kind(const LayerSpec& spec) {
  switch (spec.kind) {
    case LayerKind::input:
    case LayerKind::batch_norm:
    case LayerKind::eltwise:
      break;
    case LayerKind::convolution:
      return convolution_output(spec);
    case LayerKind::pooling:
      return pooling_output(spec);
    case LayerKind::adaptive_avg_pool:
      if (auto ok = check_range(spec.output_h, 1, "output height"); !ok) return ok.error();
      if (auto ok = check_range(spec.output_w, 1, "output width"); !ok) return ok.error();
      return Shape{spec.input.channels, spec.output_h, spec.output_w};
    case LayerKind::inner_product: {
      if (auto ok = check_range(spec.output_channels, 1, "output features"); !ok) return ok.error();
      if (auto in = vector_input(spec, "linear"); !in) return in.error();
      return Shape{spec.output_channels, 1, 1};
    }
    case LayerKind::add:
      if (spec.add_inputs < 2 || spec.add_inputs > 64)
        return bad_input("add needs 2 to 64 inputs, not " + number(spec.add_inputs));
      break;
    case LayerKind::concat: {
      if (spec.concat_channels.size() < 2 || spec.concat_channels.size() > 64)
        return bad_input("concat needs 2 to 64 inputs, not " +
                         number(static_cast<std::int64_t>(spec.concat_channels.size())));
      std::int64_t total = 0;
      for (const std::int64_t channels : spec.concat_channels) {
        if (auto ok = check_range(channels, 1, "concat input channels"); !ok) return ok.error();
        total += channels;
      }
      if (total != spec.input.channels)
        return bad_input("concat channels " + number(total) + " (the sum of its inputs') differ from " +
                         number(spec.input.channels));
      break;
    }
    case LayerKind::flatten:
      return Shape{spec.input.elements(), 1, 1};
    case LayerKind::dropout:
      if (!(spec.dropout_probability >= 0.0 && spec.dropout_probability < 1.0))
        return bad_input("dropout probability must be in [0, 1)");
      break;
    case LayerKind::softmax_cross_entropy:
      return vector_input(spec, "softmax cross-entropy loss");
  }
  if (spec.kind == LayerKind::batch_norm && !(spec.batch_norm_epsilon > 0.0 && spec.batch_norm_epsilon < 1.0))
    return bad_input("batch norm epsilon must be in (0, 1)");
  return spec.input;
}

// Per-image work of a layer, as a double (the bound check must not itself overflow).
double work_per_image(const LayerSpec& spec, const Shape& output) {
  const double in = static_cast<double>(spec.input.channels) * spec.input.height * spec.input.width;
  const double out = static_cast<double>(output.channels) * output.height * output.width;
  double work = std::max(in, out);
  if (spec.kind == LayerKind::convolution)
    work =
        std::max(work, out * (static_cast<double>(spec.input.channels) / spec.groups) * spec.kernel_h * spec.kernel_w);
  if (spec.kind == LayerKind::pooling) work = std::max(work, out * static_cast<double>(spec.kernel_h) * spec.kernel_w);
  if (spec.kind == LayerKind::inner_product) work = std::max(work, in * output.channels);
  if (spec.kind == LayerKind::adaptive_avg_pool)  // a bin covers at most input/output + 1 rows
    work = std::max(work, out * (spec.input.height / spec.output_h + 2.0) * (spec.input.width / spec.output_w + 2.0));
  return work;
}

}  // namespace

std::string to_string(const Shape& shape) {
  return number(shape.channels) + "x" + number(shape.height) + "x" + number(shape.width);
}

bool LayerSpec::operator==(const LayerSpec& other) const {
  return kind == other.kind && to_descriptor(*this) == to_descriptor(other);
}

std::string kind_name(LayerKind kind) {
  switch (kind) {
    case LayerKind::input:
      return "input";
    case LayerKind::convolution:
      return "convolution";
    case LayerKind::batch_norm:
      return "batch_norm";
    case LayerKind::eltwise:
      return "eltwise";
    case LayerKind::pooling:
      return "pooling";
    case LayerKind::adaptive_avg_pool:
      return "adaptive_avg_pool";
    case LayerKind::inner_product:
      return "inner_product";
    case LayerKind::add:
      return "add";
    case LayerKind::concat:
      return "concat";
    case LayerKind::flatten:
      return "flatten";
    case LayerKind::dropout:
      return "dropout";
    case LayerKind::softmax_cross_entropy:
      return "softmax_cross_entropy";
  }
  return "unknown";
}

std::vector<Shape> expected_input_shapes(const LayerSpec& spec) {
  switch (spec.kind) {
    case LayerKind::input:
      return {};
    case LayerKind::add:
      return std::vector<Shape>(static_cast<std::size_t>(std::max<std::int64_t>(spec.add_inputs, 0)), spec.input);
    case LayerKind::concat: {
      std::vector<Shape> shapes;
      for (const std::int64_t channels : spec.concat_channels)
        shapes.push_back({channels, spec.input.height, spec.input.width});
      return shapes;
    }
    default:
      return {spec.input};
  }
}

Expected<Shape> infer_output_shape(const LayerSpec& spec) {
  if (auto ok = check_shape(spec.input, "input"); !ok) return ok.error();
  // Before any kind forms input.elements() in 64-bit integers.
  if (static_cast<double>(spec.input.channels) * spec.input.height * spec.input.width > max_work_per_image)
    return bad_input("layer too large: more than 2^36 elements or multiply-adds per image");
  const auto output = shape_by_kind(spec);
  if (!output) return output.error();
  if (auto ok = check_shape(*output, "output"); !ok) return ok.error();
  if (work_per_image(spec, *output) > max_work_per_image)
    return bad_input("layer too large: more than 2^36 elements or multiply-adds per image");
  return output;
}

std::int64_t parameter_count(const LayerSpec& spec) {
  switch (spec.kind) {
    case LayerKind::convolution:
      if (spec.groups < 1) return 0;  // not a valid spec; infer_output_shape says why
      return spec.output_channels * (spec.input.channels / spec.groups) * spec.kernel_h * spec.kernel_w +
             (spec.bias ? spec.output_channels : 0);
    case LayerKind::inner_product:
      return spec.output_channels * spec.input.channels + (spec.bias ? spec.output_channels : 0);
    case LayerKind::batch_norm:
      return 2 * spec.input.channels;  // gamma and beta
    default:
      return 0;
  }
}

}  // namespace dnntune::workloads
