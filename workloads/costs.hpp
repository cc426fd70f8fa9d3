// workloads/costs.hpp — what one training iteration computes and moves: FLOPs, multiply-adds
// and bytes per layer and pass (forward, backward-data, backward-weights), parameters,
// activation memory kept for backward, and network totals (gradients to all-reduce, optimizer).
//
// Conventions (the cost model and the micro-runs rely on them):
// * A multiply-add counts as 2 FLOPs. `macs` counts the multiply-adds of convolutions and
//   inner products only, padding included, exactly as a forward hook over PyTorch's Conv2d and
//   Linear modules counts them (output elements x input channels per group x kernel area).
//   Bias additions are 1 FLOP per output element (and 1 per element in the bias gradient).
// * Other layers count their arithmetic per element: batch norm forward 5 (sum, sum of
//   squares, scale-and-shift), backward-weights 5 (normalise, multiply-add, sum), backward-data
//   6; ReLU 1 each way, ReLU6 2; max pooling forward one comparison per extra window element,
//   backward 1 per output; average pooling 1 per window element, backward 1 per window element
//   and output; add n-1 per element; dropout 1 per element each way (the multiply by the
//   scaled mask; random numbers are not counted); softmax + cross-entropy 4 per logit forward
//   (max, subtract, exp, sum) plus 2 per image, backward 1 per logit plus 1 per image.
//   Per-channel terms (O(C)) are left out. Concat and flatten compute nothing.
// * Bytes are the least a standalone kernel must read and write, each tensor once: fp32
//   activations, weights and gradients (4 bytes), max-pooling indices as PyTorch keeps them
//   (int64, 8 bytes), dropout masks (1 byte), labels (int64). Views move nothing: flatten,
//   and the backward of add and concat (PyTorch hands the gradient, or slices of it, on).
// * Backward passes a network does not run are zero (see Layer::computes_data_gradient).
// * When several layers read one tensor, backward sums their gradients: that is
//   NetworkCost::gradient_sums ((k-1) adds per element for k readers), not a layer's cost,
//   so that a layer's cost depends on its descriptor and batch alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "workloads/graph.hpp"
#include "workloads/layer.hpp"

namespace dnntune::workloads {

enum class Pass { forward, backward_data, backward_weights };
constexpr Pass all_passes[] = {Pass::forward, Pass::backward_data, Pass::backward_weights};
std::string pass_name(Pass pass);  // "forward", "backward_data", "backward_weights"

struct PassCost {
  std::int64_t flops = 0;  // a multiply-add is 2
  std::int64_t macs = 0;   // convolution and inner-product multiply-adds (0 for other kinds)
  std::int64_t bytes = 0;  // the least read + written

  PassCost& operator+=(const PassCost& other) {
    flops += other.flops;
    macs += other.macs;
    bytes += other.bytes;
    return *this;
  }
};

struct LayerCost {
  PassCost forward;
  PassCost backward_data;
  PassCost backward_weights;
  std::int64_t parameters = 0;
  // What this layer's backward reads that its forward kept: its input (convolution, linear,
  // batch norm, max pooling) or output (ReLU), plus batch-norm statistics, pooling indices,
  // dropout masks, softmax probabilities and labels. A tensor several layers keep counts for
  // each of them here, once in NetworkCost::activation_bytes_kept.
  std::int64_t saved_activation_bytes = 0;

  const PassCost& pass(Pass which) const;
};

// One layer at `batch` (1..max_batch) as a standalone problem: all three passes, whether or
// not a network runs them; depends only on the spec (that is, the descriptor) and the batch.
// `spec` must be valid (infer_output_shape succeeds); an invalid one costs nothing.
LayerCost layer_cost(const LayerSpec& spec, std::int64_t batch);

// The same layer where it sits in its network: the backward passes the network does not run
// are zero, and a layer that runs no backward keeps no activations.
LayerCost layer_cost(const Layer& layer, std::int64_t batch);

// The optimizer is SGD with momentum and weight decay (torch.optim.SGD, the ImageNet recipe
// of the reference studies): per parameter, g += wd*w; v = mu*v + g; w -= lr*v.
constexpr std::int64_t optimizer_flops_per_parameter = 6;
constexpr std::int64_t optimizer_bytes_per_parameter = 20;  // read w, g, v; write w, v (fp32)
constexpr std::int64_t bytes_per_gradient = 4;              // fp32

struct NetworkCost {
  std::int64_t batch = 1;
  PassCost forward;  // sums over layers of layer_cost(layer, batch)
  PassCost backward_data;
  PassCost backward_weights;
  PassCost gradient_sums;  // backward: summing gradients of tensors with several readers
  std::int64_t parameters = 0;
  std::int64_t gradient_bytes = 0;          // bytes_per_gradient x parameters: the all-reduce
  std::int64_t optimizer_update_flops = 0;  // per iteration, independent of the batch
  std::int64_t optimizer_update_bytes = 0;
  std::int64_t activation_bytes_kept = 0;  // each kept tensor once, plus statistics/indices/masks
  std::int64_t layers = 0;                 // all layers, the input included
  std::int64_t distinct_layers = 0;        // distinct descriptors, the input excluded

  // forward + backward_data + backward_weights + gradient_sums (optimizer not included).
  PassCost training() const;
  // Bytes a training process holds at its peak: what the forward keeps for the backward,
  // weights, gradients, momentum and a copy (4 bytes each), and 10% in flight. ResNet-152 at
  // batch 32: 7.3 GB by this; 7.2 GB peak resident measured in Debian's libtorch.
  double training_memory_bytes() const;
};

// Totals at `batch`; fails when batch is outside 1..max_batch.
Expected<NetworkCost> network_cost(const Network& network, std::int64_t batch);

// A layer shape and how often it occurs: what micro-runs time once for all its occurrences.
struct DistinctLayer {
  std::string descriptor;
  LayerSpec spec;
  int count = 0;        // occurrences in the network
  int first_layer = 0;  // id of the first occurrence
};

// The network's distinct layers in order of first occurrence; input layers are left out
// (they compute nothing). Batch norm and ReLU are separate entries, as they are separate layers.
std::vector<DistinctLayer> distinct_layers(const Network& network);

}  // namespace dnntune::workloads
