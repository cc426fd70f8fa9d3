// calibrate/onednn_network.cpp — a whole network's training step (forward, then backward in
// reverse) as a chain of the same oneDNN primitives the micro-runs time, the way a framework on
// oneDNN runs it: each layer reads its producers' outputs (reordered when a convolution wants
// another layout), gradients flow back and are summed where a tensor has several readers,
// concat's gradient is split by reorders of sub-tensors, flatten is a reorder to plain layout.
// Every buffer is allocated once when the chain is set up.
#include <functional>
#include <stdexcept>

#include "calibrate/onednn_layer.hpp"

namespace dnntune::calibrate::onednn {

using dnnl::memory;
using workloads::LayerKind;
using workloads::Pass;

namespace {

class NetworkRun final : public PreparedRun {
 public:
  NetworkRun(const workloads::Network& network, std::int64_t batch, const dnnl::engine& engine)
      : network_(network), batch_(batch), engine_(engine), stream_(engine), nodes_(network.layers.size()) {
    for (std::size_t id = 0; id < network_.layers.size(); ++id) build_forward(static_cast<int>(id));
    for (int id = static_cast<int>(network_.layers.size()) - 1; id >= 0; --id) build_backward(id);
  }

  void run() override {
    for (const auto& step : steps_) step();
    stream_.wait();
  }

 private:
  struct Node {
    std::shared_ptr<Layer> layer;
    LayerMemories memories;
    memory output;                  // what the layer's readers read
    std::vector<memory> gradients;  // the readers' gradients for that output, each in its own layout
  };

  memory::dims dims_of(const workloads::Shape& shape) const {
    return {batch_, shape.channels, shape.height, shape.width};
  }

  // `from` in layout `desc`: itself, or a buffer a reorder step fills.
  memory converted(const memory& from, const memory::desc& desc) {
    if (from.get_desc() == desc) return from;
    memory to(desc, engine_);
    steps_.push_back([this, reorder = dnnl::reorder(from, to), source = memory(from), to]() mutable {
      reorder.execute(stream_, source, to);
    });
    return to;
  }

  void build_forward(int id) {
    const workloads::Layer& layer = network_.layers[id];
    Node& node = nodes_[id];
    if (layer.spec.kind == LayerKind::input) {
      node.output = memory(plain_desc(dims_of(layer.output)), engine_);
      std::vector<float> image(static_cast<std::size_t>(batch_ * layer.output.elements()), 0.5f);
      write_plain(stream_, node.output, image);
      return;
    }
    if (layer.spec.kind == LayerKind::flatten) {
      const memory plain = converted(nodes_[layer.inputs.front()].output, plain_desc(dims_of(layer.spec.input)));
      node.output = memory(plain_desc({batch_, layer.spec.input.elements()}), engine_, plain.get_data_handle());
      return;
    }
    std::vector<memory::desc> inputs;
    for (const int input : layer.inputs) inputs.push_back(nodes_[input].output.get_desc());
    auto created = Layer::create(layer.spec, batch_, inputs, layer.runs_backward, engine_);
    if (!created) throw std::runtime_error(layer.name + " (" + layer.descriptor + "): " + created.error().message);
    node.layer = std::move(*created);
    node.memories = node.layer->allocate(static_cast<std::uint32_t>(id));
    for (std::size_t index = 0; index < layer.inputs.size(); ++index)
      node.memories.src[index] = converted(nodes_[layer.inputs[index]].output, node.layer->src_descs()[index]);
    steps_.push_back([this, &node] { node.layer->execute(Pass::forward, stream_, node.memories); });
    node.output = node.memories.dst;
  }

  // The sum of the readers' gradients, in `desc`.
  memory combined(const std::vector<memory>& gradients, const memory::desc& desc) {
    if (gradients.size() == 1) return converted(gradients.front(), desc);
    std::vector<memory> sources;
    std::vector<memory::desc> source_descs;
    for (const memory& gradient : gradients) {
      sources.push_back(converted(gradient, desc));
      source_descs.push_back(desc);
    }
    const dnnl::sum::primitive_desc pd(desc, std::vector<float>(sources.size(), 1.0f), source_descs, engine_);
    memory total(desc, engine_);
    std::unordered_map<int, memory> arguments{{DNNL_ARG_DST, total}};
    for (std::size_t index = 0; index < sources.size(); ++index)
      arguments.emplace(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(index), sources[index]);
    steps_.push_back([this, sum = dnnl::sum(pd), arguments] { sum.execute(stream_, arguments); });
    return total;
  }

  void build_backward(int id) {
    const workloads::Layer& layer = network_.layers[id];
    Node& node = nodes_[id];
    const LayerKind kind = layer.spec.kind;
    if (!layer.runs_backward || kind == LayerKind::input) return;
    if (kind != LayerKind::softmax_cross_entropy && node.gradients.empty()) return;  // leads to no loss
    const memory gradient = kind == LayerKind::softmax_cross_entropy ? node.memories.diff_dst
                                                                     : combined(node.gradients, node.output.get_desc());
    switch (kind) {
      case LayerKind::flatten: {
        const int producer = layer.inputs.front();
        nodes_[producer].gradients.push_back(
            memory(plain_desc(dims_of(layer.spec.input)), engine_, gradient.get_data_handle()));
        return;
      }
      case LayerKind::add:
        for (const int input : layer.inputs) nodes_[input].gradients.push_back(gradient);
        return;
      case LayerKind::concat: {
        std::int64_t offset = 0;
        for (std::size_t index = 0; index < layer.inputs.size(); ++index) {
          const std::int64_t channels = layer.spec.concat_channels[index];
          const auto slice_desc = gradient.get_desc().submemory_desc(
              {batch_, channels, layer.spec.input.height, layer.spec.input.width}, {0, offset, 0, 0});
          memory slice(slice_desc, engine_, gradient.get_data_handle());
          Node& producer = nodes_[layer.inputs[index]];
          memory target(producer.output.get_desc(), engine_);
          steps_.push_back([this, reorder = dnnl::reorder(slice, target), slice, target]() mutable {
            reorder.execute(stream_, slice, target);
          });
          producer.gradients.push_back(target);
          offset += channels;
        }
        return;
      }
      default:
        break;
    }
    node.memories.diff_dst = converted(gradient, node.layer->dst_desc());
    if (node.layer->primitive(Pass::backward_weights))
      steps_.push_back([this, &node] { node.layer->execute(Pass::backward_weights, stream_, node.memories); });
    // Batch normalization's backward_data primitive also computes its scale and shift gradients.
    if (layer.computes_data_gradient || kind == LayerKind::batch_norm)
      steps_.push_back([this, &node] {
        node.layer->reorder_weights_for_backward(stream_, node.memories);  // as after each weight update
        node.layer->execute(Pass::backward_data, stream_, node.memories);
      });
    if (layer.computes_data_gradient) nodes_[layer.inputs.front()].gradients.push_back(node.memories.diff_src);
  }

  workloads::Network network_;
  std::int64_t batch_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::vector<Node> nodes_;
  std::vector<std::function<void()>> steps_;
};

}  // namespace

std::unique_ptr<PreparedRun> make_network_run(const workloads::Network& network, std::int64_t batch,
                                              const dnnl::engine& engine) {
  return std::make_unique<NetworkRun>(network, batch, engine);
}

}  // namespace dnntune::calibrate::onednn
