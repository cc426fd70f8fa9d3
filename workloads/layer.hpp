// workloads/layer.hpp — one layer of a network as a plain, batch-free problem description
// (LayerSpec), its output shape, and its canonical short descriptor string.
//
// A descriptor is what dedupes layers: two layers with the same descriptor compute the same
// thing, anywhere in any network, so a micro-run of one times them all. It follows oneDNN
// benchdnn's style, `prefix:` then `key value` pairs (batch is never part of it):
//
//   input:ic3ih224iw224                          the image fed to the network
//   conv:ic64ih56iw56oc64kh3kw3sh1ph1            convolution (g, sw, pw, dh, dw, bias optional)
//   bnorm:ic64ih56iw56                           batch norm (eps printed when not 1e-5)
//   relu:ic64ih56iw56   relu6:ic32ih112iw112     element-wise activations
//   maxpool:ic64ih112iw112kh3kw3sh2ph1           max pooling (ceil1 = ceil_mode)
//   avgpool:ic384ih35iw35kh3kw3sh1ph1exclpad1    average pooling (exclpad1 = count_include_pad off)
//   adaptavgpool:ic2048ih7iw7oh1ow1              adaptive average pooling (oh1ow1 = global)
//   linear:ic2048oc1000bias1                     inner product on a flattened (ic x 1 x 1) input
//   add:ic256ih56iw56                            element-wise sum (n3 when 3 inputs, ...)
//   concat:ic64+64+96+32ih35iw35                 concatenation along channels, one ic per input
//   flatten:ic512ih7iw7                          reshape to (ic*ih*iw) x 1 x 1, a view
//   dropout:ic4096ih1iw1p0.5                     dropout with drop probability p
//   softmaxloss:ic1000                           softmax + cross-entropy loss over ic classes
//
// Printing rules (so that each layer has exactly one string): tensor and kernel sizes (ic, ih,
// iw, oc, kh, kw, oh, ow) and sh/ph are always printed; sw, pw and dw only when they differ from
// sh, ph and dh; g, dh, bias, ceil, exclpad, n and eps only when not at their defaults (1, 1, 0,
// 0, 0, 2, 1e-5); p always. Dilation follows PyTorch (dh1 = dense; oneDNN counts dh-1).
// Parsing is lenient where benchdnn is (any key order; iw defaults to ih, kw to kh, sw to sh,
// pw to ph, dw to dh, sh to 1, ph to 0, p to 0.5) and prints back in canonical form.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace dnntune::workloads {

// Costs are exact 64-bit integers: every layer's per-image work is bounded (see
// infer_output_shape) and batches are at most this, so no figure can overflow.
constexpr std::int64_t max_batch = 65536;

enum class LayerKind {
  input,                  // the network's image input; computes nothing
  convolution,            // torch.nn.Conv2d
  batch_norm,             // torch.nn.BatchNorm2d in training mode (batch statistics, affine)
  eltwise,                // ReLU, ReLU6 (EltwiseAlgorithm)
  pooling,                // MaxPool2d / AvgPool2d (PoolAlgorithm)
  adaptive_avg_pool,      // AdaptiveAvgPool2d; global pooling is output 1x1
  inner_product,          // torch.nn.Linear
  add,                    // element-wise sum of n same-shaped inputs (residual connections)
  concat,                 // torch.cat along channels
  flatten,                // torch.flatten(x, 1): a view, moves nothing
  dropout,                // torch.nn.Dropout in training mode
  softmax_cross_entropy,  // torch.nn.CrossEntropyLoss on logits (the training loss)
};

enum class EltwiseAlgorithm { relu, relu6 };
enum class PoolAlgorithm { max, avg };

// The per-image shape of a tensor (NCHW without N; batch is a separate dimension everywhere).
// Vectors (a Linear's input and output, a loss's logits) are C x 1 x 1.
struct Shape {
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;

  std::int64_t elements() const { return channels * height * width; }
  bool operator==(const Shape& other) const {
    return channels == other.channels && height == other.height && width == other.width;
  }
  bool operator!=(const Shape& other) const { return !(*this == other); }
};

// "64x56x56" (channels x height x width).
std::string to_string(const Shape& shape);

// Everything that defines one layer's computation except the batch, with the PyTorch
// constructor arguments needed to build it exactly. Fields that do not apply to a kind are
// ignored everywhere (==, the descriptor, costs): two specs are equal when their descriptors are.
struct LayerSpec {
  LayerKind kind = LayerKind::input;
  // The shape of the input (of every input, for add). For concat: the spatial size of every
  // input, with channels = the sum of concat_channels (the concatenated shape).
  Shape input;
  std::vector<std::int64_t> concat_channels;    // concat: channels of each input, in order
  std::int64_t output_channels = 0;             // convolution, inner_product
  std::int64_t kernel_h = 0, kernel_w = 0;      // convolution, pooling
  std::int64_t stride_h = 1, stride_w = 1;      // convolution, pooling
  std::int64_t pad_h = 0, pad_w = 0;            // convolution, pooling (each side)
  std::int64_t dilation_h = 1, dilation_w = 1;  // convolution (PyTorch's: 1 = dense)
  std::int64_t groups = 1;                      // convolution (depth-wise: groups = channels)
  bool bias = false;                            // convolution, inner_product
  bool ceil_mode = false;                       // pooling
  bool count_include_pad = true;                // avg pooling (PyTorch's default)
  std::int64_t output_h = 0, output_w = 0;      // adaptive_avg_pool: the target size
  std::int64_t add_inputs = 2;                  // add: how many tensors are summed
  double batch_norm_epsilon = 1e-5;             // batch_norm (torchvision Inception: 1e-3)
  double dropout_probability = 0.5;             // dropout: the probability of zeroing
  EltwiseAlgorithm eltwise = EltwiseAlgorithm::relu;
  PoolAlgorithm pool = PoolAlgorithm::max;

  bool operator==(const LayerSpec& other) const;
  bool operator!=(const LayerSpec& other) const { return !(*this == other); }
};

// "convolution", "batch_norm", ... (as the JSON files and tables name kinds).
std::string kind_name(LayerKind kind);

// The shape of each input the layer expects, in order (none for input; n copies for add; one
// per concatenated tensor for concat).
std::vector<Shape> expected_input_shapes(const LayerSpec& spec);

// Checks that the spec describes a computable layer and returns its per-image output shape,
// with PyTorch's output-size rules (floor, or ceil_mode for pooling). Errors say what is wrong
// without naming the layer (the caller knows its name). Besides geometry, sizes are at most
// 2^24 and a layer's work at most 2^36 (about 7*10^10) elements or multiply-adds per image, so
// that costs at any batch up to max_batch fit in 64-bit integers.
Expected<Shape> infer_output_shape(const LayerSpec& spec);

// Learnable parameters: weights and biases (conv, linear), scale and shift (batch norm).
// Running statistics are buffers, not parameters, as in torch.nn.Module.parameters().
std::int64_t parameter_count(const LayerSpec& spec);

// The canonical descriptor (see the top of this file). The spec must be valid.
std::string to_descriptor(const LayerSpec& spec);

// Parses a descriptor and validates the layer it describes (infer_output_shape).
Expected<LayerSpec> parse_descriptor(const std::string& descriptor);

}  // namespace dnntune::workloads
