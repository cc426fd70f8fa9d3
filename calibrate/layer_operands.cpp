// calibrate/layer_operands.cpp — see layer_operands.hpp.
#include "calibrate/layer_operands.hpp"

#include <algorithm>

namespace dnntune::calibrate {

using workloads::LayerKind;
using workloads::LayerSpec;
using workloads::Pass;

std::int64_t Operand::elements() const {
  std::int64_t count = 1;
  for (const std::int64_t size : dims) count *= size;
  return count;
}

namespace {

std::vector<std::int64_t> activation(std::int64_t batch, const workloads::Shape& shape) {
  return {batch, shape.channels, shape.height, shape.width};
}

PassOperands with_weights(const LayerSpec& spec, Pass pass, const std::vector<std::int64_t>& src,
                          const std::vector<std::int64_t>& dst, const std::vector<std::int64_t>& weights) {
  const Operand src_operand{"src", src}, dst_operand{"dst", dst}, weights_operand{"weights", weights};
  const Operand bias{"bias", {spec.output_channels}};
  switch (pass) {
    case Pass::forward: {
      PassOperands operands{{src_operand, weights_operand}, {dst_operand}};
      if (spec.bias) operands.inputs.push_back(bias);
      return operands;
    }
    case Pass::backward_data:
      return {{{"diff_dst", dst}, weights_operand}, {{"diff_src", src}}};
    case Pass::backward_weights: {
      PassOperands operands{{src_operand, {"diff_dst", dst}}, {{"diff_weights", weights}}};
      if (spec.bias) operands.outputs.push_back({"diff_bias", {spec.output_channels}});
      return operands;
    }
  }
  return {};
}

PassOperands data_only(Pass pass, const std::vector<std::int64_t>& src, const std::vector<std::int64_t>& dst) {
  if (pass == Pass::forward) return {{{"src", src}}, {{"dst", dst}}};
  if (pass == Pass::backward_data) return {{{"src", src}, {"diff_dst", dst}}, {{"diff_src", src}}};
  return {};
}

}  // namespace

PassOperands pass_operands(const LayerSpec& spec, std::int64_t batch, Pass pass) {
  const auto output = workloads::infer_output_shape(spec);
  if (!output) return {};
  const auto src = activation(batch, spec.input);
  const auto dst = activation(batch, *output);
  switch (spec.kind) {
    case LayerKind::input:
    case LayerKind::flatten:
      return {};
    case LayerKind::convolution:
      return with_weights(spec, pass, src, dst,
                          {spec.output_channels, spec.input.channels / spec.groups, spec.kernel_h, spec.kernel_w});
    case LayerKind::inner_product:
      return with_weights(spec, pass, {batch, spec.input.channels}, {batch, spec.output_channels},
                          {spec.output_channels, spec.input.channels});
    case LayerKind::batch_norm: {
      const std::vector<std::int64_t> channels{spec.input.channels};
      if (pass == Pass::forward) return {{{"src", src}, {"scale", channels}, {"shift", channels}}, {{"dst", dst}}};
      if (pass == Pass::backward_data)
        return {{{"src", src}, {"diff_dst", dst}, {"scale", channels}}, {{"diff_src", src}}};
      return {{{"src", src}, {"diff_dst", dst}}, {{"diff_scale", channels}, {"diff_shift", channels}}};
    }
    case LayerKind::eltwise:
    case LayerKind::pooling:
    case LayerKind::adaptive_avg_pool:
      return data_only(pass, src, dst);
    case LayerKind::add:
    case LayerKind::concat: {
      if (pass != Pass::forward) return {};
      PassOperands operands;
      const auto shapes = workloads::expected_input_shapes(spec);
      for (std::size_t index = 0; index < shapes.size(); ++index)
        operands.inputs.push_back({"src" + std::to_string(index), activation(batch, shapes[index])});
      operands.outputs.push_back({"dst", dst});
      return operands;
    }
    case LayerKind::dropout:
      if (pass == Pass::forward) return {{{"src", src}}, {{"dst", dst}}};
      if (pass == Pass::backward_data) return {{{"diff_dst", dst}}, {{"diff_src", src}}};
      return {};
    case LayerKind::softmax_cross_entropy: {
      const std::vector<std::int64_t> logits{batch, spec.input.channels};
      if (pass == Pass::forward) return {{{"src", logits}}, {{"loss", {1}}}};
      if (pass == Pass::backward_data) return {{{"src", logits}}, {{"diff_src", logits}}};
      return {};
    }
  }
  return {};
}

bool has_pass(const LayerSpec& spec, Pass pass) { return !pass_operands(spec, 1, pass).outputs.empty(); }

std::int64_t operand_bytes(const PassOperands& operands) {
  std::int64_t elements = 0;
  for (const auto* list : {&operands.inputs, &operands.outputs})
    for (const Operand& operand : *list) elements += operand.elements();
  return 4 * elements;
}

bool operand_just_written(const std::string& name, Pass pass) {
  if (pass == Pass::forward) return name.rfind("src", 0) == 0;
  return name == "diff_dst";
}

int operand_sets_for_cold_cache(const PassOperands& operands, Pass pass, std::int64_t last_level_cache_bytes) {
  constexpr int most_sets = 8;
  std::int64_t rotating_elements = 0;
  for (const auto* list : {&operands.inputs, &operands.outputs})
    for (const Operand& operand : *list)
      if (!operand_just_written(operand.name, pass)) rotating_elements += operand.elements();
  const std::int64_t bytes = std::max<std::int64_t>(4 * rotating_elements, 1);
  const std::int64_t needed = (2 * last_level_cache_bytes + bytes - 1) / bytes;
  return static_cast<int>(std::clamp<std::int64_t>(needed, 1, most_sets));
}

}  // namespace dnntune::calibrate
