// calibrate/onednn_layer.hpp — internal to the oneDNN backend (onednn_*.cpp only: it
// includes dnnl.hpp): one layer's oneDNN primitives, created once for given input layouts, and
// the memories one execution of them reads and writes. The micro-runs and the whole-network run
// share it, so both time exactly the same primitives.
//
// Layouts follow oneDNN-based frameworks (TensorFlow with oneDNN, MXNet): convolutions choose
// their own layouts (format `any`), every other layer works in the layout of its input;
// micro-runs feed those layers the layout oneDNN's convolutions produce on this CPU (blocked by
// 16 channels with AVX-512, by 8 with AVX2, plain otherwise), linear layers and the loss plain
// N x C. Weights are reordered once when a layer is set up, as frameworks cache them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "common/expected.hpp"
#include "calibrate/layer_backend.hpp"
#include "workloads/costs.hpp"
#include "workloads/graph.hpp"
#include "workloads/layer.hpp"

namespace dnntune::calibrate::onednn {

// The memories of one execution of a layer's passes (names as in layer_operands.hpp).
struct LayerMemories {
  std::vector<dnnl::memory> src;                 // one per input
  dnnl::memory weights, bias;                    // batch norm: scale, shift
  dnnl::memory weights_for_backward;             // the weights in the layout backward_data wants (may be `weights`)
  dnnl::memory dst;                              // softmax loss: the log-probabilities
  dnnl::memory mean, variance, workspace, mask;  // what the forward keeps for backward
  dnnl::memory diff_dst, diff_src, diff_weights, diff_bias;
  float loss = 0;  // softmax loss: the batch's mean cross-entropy
};

// The activation layout of a 4-D tensor in micro-runs on this CPU (other ranks: plain).
dnnl::memory::desc activation_desc(const std::vector<std::int64_t>& dims);
// The plain (row-major: nchw, oihw, nc, x) layout of `dims`.
dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims);

class Layer {
 public:
  // Creates the forward primitive, and the backward ones when `backward` (the backward passes
  // the spec has). `inputs` are the layouts of the layer's inputs (plain N x C for linear
  // layers and the loss). Errors: bad_input when oneDNN has no implementation.
  static Expected<std::shared_ptr<Layer>> create(const workloads::LayerSpec& spec, std::int64_t batch,
                                                 const std::vector<dnnl::memory::desc>& inputs, bool backward,
                                                 const dnnl::engine& engine);

  // Allocates every memory the created passes touch, with random inputs and parameters.
  LayerMemories allocate(std::uint32_t seed) const;

  // Arguments of one pass over `memories` (which must outlive the returned map's use).
  std::unordered_map<int, dnnl::memory> arguments(workloads::Pass pass, const LayerMemories& memories) const;
  // The primitive of a pass; null when oneDNN runs none (a pass the layer does not have).
  const dnnl::primitive* primitive(workloads::Pass pass) const;
  // Copies the weights into the layout backward_data reads them in, when that differs (a
  // framework does this after each update; micro-runs do it once, untimed).
  void reorder_weights_for_backward(dnnl::stream& stream, LayerMemories& memories) const;
  // Runs a pass; the softmax loss also computes its loss value (forward) from the
  // log-probabilities. The stream is waited for.
  void execute(workloads::Pass pass, dnnl::stream& stream, LayerMemories& memories) const;

  // The layout a convolution wants its input in (for the whole-network run to reorder into).
  const std::vector<dnnl::memory::desc>& src_descs() const { return src_descs_; }
  const dnnl::memory::desc& dst_desc() const { return dst_desc_; }

 private:
  friend struct PrimitiveBuilder;  // onednn_layer.cpp: one member per layer kind creates its primitives
  workloads::LayerSpec spec_;
  std::int64_t batch_ = 0;
  dnnl::engine engine_;
  std::vector<dnnl::memory::desc> src_descs_;
  dnnl::memory::desc dst_desc_, weights_desc_, weights_backward_desc_, bias_desc_, mean_desc_, variance_desc_,
      workspace_desc_;
  dnnl::memory::desc diff_weights_desc_, diff_bias_desc_;
  dnnl::primitive forward_, backward_data_, backward_weights_;
  bool has_backward_data_ = false, has_backward_weights_ = false;
};

// The whole network as a chain of Layers (onednn_network.cpp). Throws on failure.
std::unique_ptr<PreparedRun> make_network_run(const workloads::Network& network, std::int64_t batch,
                                              const dnnl::engine& engine);

// Plain-layout copies between a memory and a vector (reorders on `stream`).
void write_plain(dnnl::stream& stream, const dnnl::memory& memory, const std::vector<float>& values);
std::vector<float> read_plain(dnnl::stream& stream, const dnnl::memory& memory);

}  // namespace dnntune::calibrate::onednn
