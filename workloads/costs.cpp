// workloads/costs.cpp — FLOPs, multiply-adds, bytes, parameters and kept activations per layer
// and pass, and network totals, with the conventions stated in costs.hpp.
#include "workloads/costs.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace dnntune::workloads {
namespace {

constexpr std::int64_t float_bytes = 4;
constexpr std::int64_t index_bytes = 8;  // PyTorch's int64 pooling indices and labels
constexpr std::int64_t mask_bytes = 1;   // PyTorch's bool dropout mask

// Which tensors a layer's backward reads from its forward, and extra state it keeps.
struct KeptForBackward {
  bool input = false;
  bool output = false;
  std::int64_t extra_bytes = 0;
};

// Sum over output positions of how many input positions the window covers (padding
// excluded), along one axis: the elements a pooling window actually reads.
std::int64_t window_reads(std::int64_t input, std::int64_t output, std::int64_t kernel, std::int64_t stride,
                          std::int64_t pad) {
  std::int64_t reads = 0;
  for (std::int64_t position = 0; position < output; ++position) {
    const std::int64_t start = position * stride - pad;
    reads += std::min(start + kernel, input) - std::max<std::int64_t>(start, 0);
  }
  return reads;
}

// The same for adaptive average pooling, whose bins are [floor(o*in/out), ceil((o+1)*in/out)).
std::int64_t adaptive_bin_reads(std::int64_t input, std::int64_t output) {
  std::int64_t reads = 0;
  for (std::int64_t position = 0; position < output; ++position) {
    const std::int64_t start = position * input / output;
    const std::int64_t end = ((position + 1) * input + output - 1) / output;
    reads += end - start;
  }
  return reads;
}

KeptForBackward kept_for_backward(const LayerSpec& spec, std::int64_t batch, const Shape& output) {
  KeptForBackward kept;
  switch (spec.kind) {
    case LayerKind::convolution:
    case LayerKind::inner_product:
      kept.input = true;  // backward-weights multiplies the output gradient by the input
      break;
    case LayerKind::batch_norm:
      kept.input = true;
      kept.extra_bytes = 2 * spec.input.channels * float_bytes;  // batch mean, inverse std
      break;
    case LayerKind::eltwise:
      kept.output = true;  // PyTorch's in-place ReLU/ReLU6 backward reads the result
      break;
    case LayerKind::pooling:
      if (spec.pool == PoolAlgorithm::max) {
        kept.input = true;
        kept.extra_bytes = batch * output.elements() * index_bytes;
      }
      break;
    case LayerKind::dropout:
      kept.extra_bytes = batch * output.elements() * mask_bytes;
      break;
    case LayerKind::softmax_cross_entropy:
      kept.extra_bytes = batch * (spec.input.channels * float_bytes + index_bytes);
      break;
    default:
      break;
  }
  return kept;
}

}  // namespace

std::string pass_name(Pass pass) {
  switch (pass) {
    case Pass::forward:
      return "forward";
    case Pass::backward_data:
      return "backward_data";
    case Pass::backward_weights:
      return "backward_weights";
  }
  return "unknown";
}

const PassCost& LayerCost::pass(Pass which) const {
  switch (which) {
    case Pass::forward:
      return forward;
    case Pass::backward_data:
      return backward_data;
    case Pass::backward_weights:
      return backward_weights;
  }
  return forward;
}

LayerCost layer_cost(const LayerSpec& spec, std::int64_t batch) {
  LayerCost cost;
  const auto output_shape = infer_output_shape(spec);
  if (!output_shape || batch < 1 || batch > max_batch) return cost;
  const std::int64_t in = batch * spec.input.elements();  // for add: each input
  const std::int64_t out = batch * output_shape->elements();
  const std::int64_t parameters = parameter_count(spec);
  const std::int64_t channels = spec.input.channels;
  cost.parameters = parameters;

  switch (spec.kind) {
    case LayerKind::input:
    case LayerKind::flatten:
      break;
    case LayerKind::convolution:
    case LayerKind::inner_product: {
      const std::int64_t macs = spec.kind == LayerKind::convolution
                                    ? out * (channels / spec.groups) * spec.kernel_h * spec.kernel_w
                                    : out * channels;
      const std::int64_t bias_adds = spec.bias ? out : 0;
      const std::int64_t weights = parameters - (spec.bias ? spec.output_channels : 0);
      cost.forward = {2 * macs + bias_adds, macs, float_bytes * (in + out + parameters)};
      cost.backward_data = {2 * macs, macs, float_bytes * (out + weights + in)};
      cost.backward_weights = {2 * macs + bias_adds, macs, float_bytes * (in + out + parameters)};
      break;
    }
    case LayerKind::batch_norm:
      // Forward reads x, gamma, beta; writes y and the batch mean and inverse std.
      cost.forward = {5 * in, 0, float_bytes * (2 * in + 4 * channels)};
      // Backward-data reads x, dy, gamma, mean, inverse std and the two channel sums.
      cost.backward_data = {6 * in, 0, float_bytes * (3 * in + 5 * channels)};
      // Backward-weights reads x, dy, mean, inverse std; writes d(gamma), d(beta).
      cost.backward_weights = {5 * in, 0, float_bytes * (2 * in + 4 * channels)};
      break;
    case LayerKind::eltwise: {
      const std::int64_t per_element = spec.eltwise == EltwiseAlgorithm::relu ? 1 : 2;
      cost.forward = {per_element * in, 0, float_bytes * 2 * in};
      cost.backward_data = {per_element * in, 0, float_bytes * 3 * in};  // y, dy, dx
      break;
    }
    case LayerKind::pooling:
    case LayerKind::adaptive_avg_pool: {
      const bool adaptive = spec.kind == LayerKind::adaptive_avg_pool;
      const std::int64_t reads =
          batch * channels *
          (adaptive
               ? adaptive_bin_reads(spec.input.height, spec.output_h) *
                     adaptive_bin_reads(spec.input.width, spec.output_w)
               : window_reads(spec.input.height, output_shape->height, spec.kernel_h, spec.stride_h, spec.pad_h) *
                     window_reads(spec.input.width, output_shape->width, spec.kernel_w, spec.stride_w, spec.pad_w));
      if (!adaptive && spec.pool == PoolAlgorithm::max) {
        const std::int64_t indices = out * index_bytes;
        cost.forward = {reads - out, 0, float_bytes * (in + out) + indices};
        cost.backward_data = {out, 0, float_bytes * (out + in) + indices};
      } else {
        cost.forward = {reads, 0, float_bytes * (in + out)};
        cost.backward_data = {reads + out, 0, float_bytes * (out + in)};
      }
      break;
    }
    case LayerKind::add:
      cost.forward = {(spec.add_inputs - 1) * in, 0, float_bytes * (spec.add_inputs * in + out)};
      break;
    case LayerKind::concat:
      cost.forward = {0, 0, float_bytes * (in + out)};
      break;
    case LayerKind::dropout:
      cost.forward = {in, 0, float_bytes * 2 * in + mask_bytes * in};
      cost.backward_data = {in, 0, float_bytes * 2 * in + mask_bytes * in};
      break;
    case LayerKind::softmax_cross_entropy:
      // Forward reads logits and labels, writes probabilities (kept) and the loss.
      cost.forward = {4 * in + 2 * batch, 0, float_bytes * (2 * in + 1) + index_bytes * batch};
      cost.backward_data = {in + batch, 0, float_bytes * 2 * in + index_bytes * batch};
      break;
  }

  const KeptForBackward kept = kept_for_backward(spec, batch, *output_shape);
  cost.saved_activation_bytes =
      (kept.input ? float_bytes * in : 0) + (kept.output ? float_bytes * out : 0) + kept.extra_bytes;
  return cost;
}

LayerCost layer_cost(const Layer& layer, std::int64_t batch) {
  LayerCost cost = layer_cost(layer.spec, batch);
  if (!layer.computes_data_gradient) cost.backward_data = {};
  if (!layer.runs_backward) {
    cost.backward_weights = {};
    cost.saved_activation_bytes = 0;
  }
  return cost;
}

double NetworkCost::training_memory_bytes() const {
  return 1.1 * (static_cast<double>(activation_bytes_kept) + 16.0 * static_cast<double>(parameters));
}

PassCost NetworkCost::training() const {
  PassCost total = forward;
  total += backward_data;
  total += backward_weights;
  total += gradient_sums;
  return total;
}

Expected<NetworkCost> network_cost(const Network& network, std::int64_t batch) {
  if (batch < 1 || batch > max_batch)
    return bad_input("batch " + std::to_string(batch) + " out of range (1 to " + std::to_string(max_batch) + ")");
  NetworkCost total;
  total.batch = batch;
  total.layers = static_cast<std::int64_t>(network.layers.size());
  total.distinct_layers = static_cast<std::int64_t>(distinct_layers(network).size());

  std::vector<int> readers(network.layers.size(), 0);
  std::set<int> kept_tensors;  // producers whose output some backward reads
  for (std::size_t id = 0; id < network.layers.size(); ++id) {
    const Layer& layer = network.layers[id];
    const LayerCost cost = layer_cost(layer, batch);
    total.forward += cost.forward;
    total.backward_data += cost.backward_data;
    total.backward_weights += cost.backward_weights;
    total.parameters += cost.parameters;
    for (const int input : layer.inputs) ++readers[input];
    if (!layer.runs_backward) continue;
    const auto output_shape = infer_output_shape(layer.spec);
    const KeptForBackward kept = kept_for_backward(layer.spec, batch, *output_shape);
    if (kept.input) kept_tensors.insert(layer.inputs.front());
    if (kept.output) kept_tensors.insert(static_cast<int>(id));
    total.activation_bytes_kept += kept.extra_bytes;
  }
  for (const int producer : kept_tensors)
    total.activation_bytes_kept += float_bytes * batch * network.layers[producer].output.elements();

  // A tensor that k layers read gets k gradients in backward, summed with k-1 adds per element
  // (reading k, writing 1). Readers of a tensor with a gradient all compute data gradients.
  for (std::size_t id = 0; id < network.layers.size(); ++id) {
    if (!network.layers[id].runs_backward || readers[id] < 2) continue;
    const std::int64_t elements = batch * network.layers[id].output.elements();
    total.gradient_sums += {(readers[id] - 1) * elements, 0, float_bytes * (readers[id] + 1) * elements};
  }

  total.gradient_bytes = bytes_per_gradient * total.parameters;
  total.optimizer_update_flops = optimizer_flops_per_parameter * total.parameters;
  total.optimizer_update_bytes = optimizer_bytes_per_parameter * total.parameters;
  return total;
}

std::vector<DistinctLayer> distinct_layers(const Network& network) {
  std::vector<DistinctLayer> distinct;
  std::map<std::string, std::size_t> position;
  for (std::size_t id = 0; id < network.layers.size(); ++id) {
    const Layer& layer = network.layers[id];
    if (layer.spec.kind == LayerKind::input) continue;
    const auto [found, inserted] = position.emplace(layer.descriptor, distinct.size());
    if (inserted) distinct.push_back({layer.descriptor, layer.spec, 0, static_cast<int>(id)});
    ++distinct[found->second].count;
  }
  return distinct;
}

}  // namespace dnntune::workloads
