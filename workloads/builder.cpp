// workloads/builder.cpp — PyTorch-style layer specs and NetworkBuilder (see builder.hpp).
#include "workloads/builder.hpp"

namespace dnntune::workloads {
namespace {

LayerSpec of_kind(LayerKind kind) {
  LayerSpec spec;
  spec.kind = kind;
  return spec;
}

LayerSpec pooling(PoolAlgorithm algorithm, HeightWidth kernel, HeightWidth stride, HeightWidth padding,
                  bool ceil_mode) {
  LayerSpec spec = of_kind(LayerKind::pooling);
  spec.pool = algorithm;
  spec.kernel_h = kernel.height;
  spec.kernel_w = kernel.width;
  spec.stride_h = stride.height;
  spec.stride_w = stride.width;
  spec.pad_h = padding.height;
  spec.pad_w = padding.width;
  spec.ceil_mode = ceil_mode;
  return spec;
}

}  // namespace

LayerSpec conv2d(std::int64_t out_channels, HeightWidth kernel, HeightWidth stride, HeightWidth padding,
                 std::int64_t groups, bool bias, HeightWidth dilation) {
  LayerSpec spec = of_kind(LayerKind::convolution);
  spec.output_channels = out_channels;
  spec.kernel_h = kernel.height;
  spec.kernel_w = kernel.width;
  spec.stride_h = stride.height;
  spec.stride_w = stride.width;
  spec.pad_h = padding.height;
  spec.pad_w = padding.width;
  spec.dilation_h = dilation.height;
  spec.dilation_w = dilation.width;
  spec.groups = groups;
  spec.bias = bias;
  return spec;
}

LayerSpec batch_norm2d(double epsilon) {
  LayerSpec spec = of_kind(LayerKind::batch_norm);
  spec.batch_norm_epsilon = epsilon;
  return spec;
}

LayerSpec relu() { return of_kind(LayerKind::eltwise); }

LayerSpec relu6() {
  LayerSpec spec = of_kind(LayerKind::eltwise);
  spec.eltwise = EltwiseAlgorithm::relu6;
  return spec;
}

LayerSpec max_pool2d(HeightWidth kernel, HeightWidth stride, HeightWidth padding, bool ceil_mode) {
  return pooling(PoolAlgorithm::max, kernel, stride, padding, ceil_mode);
}

LayerSpec avg_pool2d(HeightWidth kernel, HeightWidth stride, HeightWidth padding, bool ceil_mode,
                     bool count_include_pad) {
  LayerSpec spec = pooling(PoolAlgorithm::avg, kernel, stride, padding, ceil_mode);
  spec.count_include_pad = count_include_pad;
  return spec;
}

LayerSpec adaptive_avg_pool2d(HeightWidth output_size) {
  LayerSpec spec = of_kind(LayerKind::adaptive_avg_pool);
  spec.output_h = output_size.height;
  spec.output_w = output_size.width;
  return spec;
}

LayerSpec linear(std::int64_t out_features, bool bias) {
  LayerSpec spec = of_kind(LayerKind::inner_product);
  spec.output_channels = out_features;
  spec.bias = bias;
  return spec;
}

LayerSpec add() { return of_kind(LayerKind::add); }
LayerSpec concat() { return of_kind(LayerKind::concat); }
LayerSpec flatten() { return of_kind(LayerKind::flatten); }

LayerSpec dropout(double probability) {
  LayerSpec spec = of_kind(LayerKind::dropout);
  spec.dropout_probability = probability;
  return spec;
}

LayerSpec softmax_cross_entropy() { return of_kind(LayerKind::softmax_cross_entropy); }

NetworkBuilder::NetworkBuilder(std::string network_name) : network_name_(std::move(network_name)) {}

NetworkBuilder::LayerId NetworkBuilder::input(const std::string& name, Shape image) {
  LayerSpec spec = of_kind(LayerKind::input);
  spec.input = image;
  return layer(name, spec, std::vector<LayerId>{});
}

NetworkBuilder::LayerId NetworkBuilder::layer(const std::string& name, LayerSpec spec,
                                              const std::vector<LayerId>& inputs) {
  LayerDefinition definition{name, std::move(spec), {}};
  std::vector<Shape> input_shapes;
  for (const LayerId input : inputs) {
    if (input < 0 || input >= static_cast<LayerId>(definitions_.size())) {
      if (first_error_.empty()) first_error_ = "layer '" + name + "' reads a layer id that was not added before it";
      continue;
    }
    definition.inputs.push_back(definitions_[input].name);
    input_shapes.push_back(shapes_[input]);
  }
  LayerSpec& filled = definition.spec;
  if (!input_shapes.empty()) {
    filled.input = input_shapes.front();
    if (filled.kind == LayerKind::add) filled.add_inputs = static_cast<std::int64_t>(inputs.size());
    if (filled.kind == LayerKind::concat) {
      filled.concat_channels.clear();
      filled.input.channels = 0;
      for (const Shape& shape : input_shapes) {
        filled.concat_channels.push_back(shape.channels);
        filled.input.channels += shape.channels;
      }
    }
  }
  // Keep going after an error (with an empty shape) so that the calls stay a plain sequence;
  // finish() reports the first error through make_network's full check.
  const auto output = infer_output_shape(filled);
  if (!output && first_error_.empty()) first_error_ = "layer '" + name + "': " + output.error().message;
  shapes_.push_back(output ? *output : Shape{});
  definitions_.push_back(std::move(definition));
  return static_cast<LayerId>(definitions_.size() - 1);
}

Shape NetworkBuilder::shape(LayerId layer) const {
  if (layer < 0 || layer >= static_cast<LayerId>(shapes_.size())) return {};
  return shapes_[layer];
}

Expected<Network> NetworkBuilder::finish() const {
  if (!first_error_.empty()) return bad_input("network '" + network_name_ + "': " + first_error_);
  return make_network(network_name_, definitions_);
}

}  // namespace dnntune::workloads
