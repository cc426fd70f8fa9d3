// train/torch_network.cpp — see torch_network.hpp. The one place where a workload graph
// becomes libtorch modules and ops.
#include "train/torch_network.hpp"

#include <torch/torch.h>

#include <sstream>

#include "probe/timing.hpp"
#include "train/module_timer.hpp"

namespace dnntune::train {

using workloads::LayerKind;

namespace {

struct LayerModules {
  torch::nn::Conv2d convolution{nullptr};
  torch::nn::BatchNorm2d batch_norm{nullptr};
  torch::nn::Linear linear{nullptr};

  std::shared_ptr<torch::nn::Module> any() const {
    if (convolution) return convolution.ptr();
    if (batch_norm) return batch_norm.ptr();
    if (linear) return linear.ptr();
    return nullptr;
  }
};

std::vector<std::string> split_module_path(const std::string& name) {
  std::vector<std::string> parts;
  std::stringstream stream(name);
  for (std::string part; std::getline(stream, part, '.');) parts.push_back(part);
  return parts;
}

// Registers `module` under its dotted path, making the plain container modules on the way
// ("layer1" and "layer1.0" for "layer1.0.conv1"), so that names match torchvision's state_dict.
void register_at_path(torch::nn::Module& root, const std::string& path, std::shared_ptr<torch::nn::Module> module) {
  const std::vector<std::string> parts = split_module_path(path);
  torch::nn::Module* parent = &root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    auto children = parent->named_children();
    if (const auto* existing = children.find(parts[i])) {
      parent = existing->get();
    } else {
      parent = parent->register_module(parts[i], std::make_shared<torch::nn::Module>()).get();
    }
  }
  parent->register_module(parts.back(), std::move(module));
}

LayerModules make_modules(const workloads::LayerSpec& spec) {
  LayerModules modules;
  switch (spec.kind) {
    case LayerKind::convolution:
      modules.convolution = torch::nn::Conv2d(
          torch::nn::Conv2dOptions(spec.input.channels, spec.output_channels, {spec.kernel_h, spec.kernel_w})
              .stride({spec.stride_h, spec.stride_w})
              .padding(torch::ExpandingArray<2>({spec.pad_h, spec.pad_w}))
              .dilation({spec.dilation_h, spec.dilation_w})
              .groups(spec.groups)
              .bias(spec.bias));
      break;
    case LayerKind::batch_norm:
      modules.batch_norm =
          torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(spec.input.channels).eps(spec.batch_norm_epsilon));
      break;
    case LayerKind::inner_product:
      modules.linear =
          torch::nn::Linear(torch::nn::LinearOptions(spec.input.elements(), spec.output_channels).bias(spec.bias));
      break;
    default:
      break;
  }
  return modules;
}

// Whether an op may overwrite the output of `producer` in place, as torchvision's in-place ReLU
// and `out += identity` do: only a tensor read by this one layer, and made by an op whose
// backward does not need its own output.
bool may_overwrite(const workloads::Layer& producer, int consumers) {
  if (consumers != 1) return false;
  switch (producer.spec.kind) {
    case LayerKind::convolution:
    case LayerKind::batch_norm:
    case LayerKind::inner_product:
    case LayerKind::add:
    case LayerKind::concat:
      return true;
    default:
      return false;
  }
}

torch::Tensor as_matrix(const torch::Tensor& tensor) { return tensor.dim() > 2 ? tensor.flatten(1) : tensor; }

}  // namespace

struct TorchNetwork::Graph {
  workloads::Network network;
  std::shared_ptr<torch::nn::Module> root = std::make_shared<torch::nn::Module>();
  std::vector<LayerModules> modules;  // by layer
  std::vector<int> last_reader;       // by layer: the last layer reading its output, -1 if none
  std::vector<bool> in_place;         // by layer: it may overwrite its first input
  std::vector<int> loss_layers;
  ModuleTimer* timer = nullptr;
};

TorchNetwork::TorchNetwork(std::unique_ptr<Graph> graph) : graph_(std::move(graph)) {}
TorchNetwork::TorchNetwork(TorchNetwork&&) noexcept = default;
TorchNetwork& TorchNetwork::operator=(TorchNetwork&&) noexcept = default;
TorchNetwork::~TorchNetwork() = default;

Expected<TorchNetwork> TorchNetwork::build(const workloads::Network& network) {
  auto graph = std::make_unique<Graph>();
  graph->network = network;
  const auto& layers = network.layers;
  std::vector<int> consumers(layers.size(), 0);
  graph->last_reader.assign(layers.size(), -1);
  for (std::size_t id = 0; id < layers.size(); ++id)
    for (const int input : layers[id].inputs) {
      ++consumers[static_cast<std::size_t>(input)];
      graph->last_reader[static_cast<std::size_t>(input)] = static_cast<int>(id);
    }
  try {
    for (std::size_t id = 0; id < layers.size(); ++id) {
      const workloads::Layer& layer = layers[id];
      graph->modules.push_back(make_modules(layer.spec));
      if (auto module = graph->modules.back().any()) {
        for (const std::string& part : split_module_path(layer.name))
          if (part.empty())
            return bad_input("network '" + network.name + "': layer '" + layer.name +
                             "' has parameters but its name is not a module path (a.b.c)");
        register_at_path(*graph->root, layer.name, module);
      }
      const bool overwrites = (layer.spec.kind == LayerKind::eltwise || layer.spec.kind == LayerKind::add) &&
                              may_overwrite(layers[static_cast<std::size_t>(layer.inputs.front())],
                                            consumers[static_cast<std::size_t>(layer.inputs.front())]);
      graph->in_place.push_back(overwrites);
      if (layer.spec.kind == LayerKind::softmax_cross_entropy) graph->loss_layers.push_back(static_cast<int>(id));
    }
  } catch (const c10::Error& error) {
    return failure("network '" + network.name + "': libtorch cannot build it: " + error.what_without_backtrace());
  }
  if (graph->loss_layers.empty())
    return bad_input("network '" + network.name + "' has no loss layer (softmaxloss): nothing to train");
  TorchNetwork built(std::move(graph));
  if (built.parameter_count() == 0)
    return bad_input("network '" + network.name + "' has no parameters: nothing to train");
  return built;
}

at::Tensor TorchNetwork::forward(const at::Tensor& images, const at::Tensor& labels) {
  const auto& layers = graph_->network.layers;
  std::vector<torch::Tensor> outputs(layers.size());
  torch::Tensor loss;
  for (std::size_t id = 0; id < layers.size(); ++id) {
    const workloads::Layer& layer = layers[id];
    const workloads::LayerSpec& spec = layer.spec;
    LayerModules& modules = graph_->modules[id];
    const auto input = [&](std::size_t k) -> torch::Tensor& {
      return outputs[static_cast<std::size_t>(layer.inputs[k])];
    };
    torch::Tensor output;
    const double started = graph_->timer ? probe::now_seconds() : 0;
    switch (spec.kind) {
      case LayerKind::input:
        output = images;
        break;
      case LayerKind::convolution:
        output = modules.convolution->forward(input(0));
        break;
      case LayerKind::batch_norm:
        output = modules.batch_norm->forward(input(0));
        break;
      case LayerKind::eltwise:
        if (spec.eltwise == workloads::EltwiseAlgorithm::relu)
          output = graph_->in_place[id] ? torch::relu_(input(0)) : torch::relu(input(0));
        else  // torch.nn.ReLU6 is Hardtanh(0, 6)
          output = graph_->in_place[id] ? torch::hardtanh_(input(0), 0, 6) : torch::hardtanh(input(0), 0, 6);
        break;
      case LayerKind::pooling:
        if (spec.pool == workloads::PoolAlgorithm::max)
          output = torch::max_pool2d(input(0), {spec.kernel_h, spec.kernel_w}, {spec.stride_h, spec.stride_w},
                                     {spec.pad_h, spec.pad_w}, {1, 1}, spec.ceil_mode);
        else
          output = torch::avg_pool2d(input(0), {spec.kernel_h, spec.kernel_w}, {spec.stride_h, spec.stride_w},
                                     {spec.pad_h, spec.pad_w}, spec.ceil_mode, spec.count_include_pad);
        break;
      case LayerKind::adaptive_avg_pool:
        output = torch::adaptive_avg_pool2d(input(0), {spec.output_h, spec.output_w});
        break;
      case LayerKind::inner_product:
        output = modules.linear->forward(as_matrix(input(0)));
        break;
      case LayerKind::add:
        output = graph_->in_place[id] ? input(0).add_(input(1)) : input(0) + input(1);
        for (std::size_t k = 2; k < layer.inputs.size(); ++k) output = output + input(k);
        break;
      case LayerKind::concat: {
        std::vector<torch::Tensor> parts;
        for (std::size_t k = 0; k < layer.inputs.size(); ++k) parts.push_back(input(k));
        output = torch::cat(parts, 1);
        break;
      }
      case LayerKind::flatten:
        output = input(0).flatten(1);
        break;
      case LayerKind::dropout:
        output = torch::dropout(input(0), spec.dropout_probability, /*train=*/true);
        break;
      case LayerKind::softmax_cross_entropy:
        output = torch::nn::functional::cross_entropy(as_matrix(input(0)), labels);
        loss = loss.defined() ? loss + output : output;
        break;
    }
    if (graph_->timer && spec.kind != LayerKind::input) {
      graph_->timer->forward_done(id, probe::now_seconds() - started);
      graph_->timer->watch_backward(id, output);
    }
    outputs[id] = std::move(output);
    // Drop tensors no later layer reads (autograd keeps what backward needs).
    for (const int producer : layer.inputs)
      if (graph_->last_reader[static_cast<std::size_t>(producer)] == static_cast<int>(id))
        outputs[static_cast<std::size_t>(producer)] = torch::Tensor();
  }
  return loss;
}

void TorchNetwork::set_module_timer(ModuleTimer* timer) { graph_->timer = timer; }

std::vector<at::Tensor> TorchNetwork::parameters() const {
  std::vector<at::Tensor> result;
  for (const auto& [name, tensor] : named_parameters()) result.push_back(tensor);
  return result;
}

std::vector<std::pair<std::string, at::Tensor>> TorchNetwork::named_parameters() const {
  std::vector<std::pair<std::string, at::Tensor>> result;
  const auto& layers = graph_->network.layers;
  for (std::size_t id = 0; id < layers.size(); ++id)
    if (const auto module = graph_->modules[id].any())
      for (const auto& item : module->named_parameters(/*recurse=*/false))
        result.emplace_back(layers[id].name + "." + item.key(), item.value());
  return result;
}

std::int64_t TorchNetwork::parameter_count() const {
  std::int64_t count = 0;
  for (const auto& tensor : parameters()) count += tensor.numel();
  return count;
}

std::int64_t TorchNetwork::classes() const {
  const auto& loss_layer = graph_->network.layers[static_cast<std::size_t>(graph_->loss_layers.front())];
  return loss_layer.spec.input.elements();
}

torch::nn::Module& TorchNetwork::module() { return *graph_->root; }

const workloads::Network& TorchNetwork::network() const { return graph_->network; }

}  // namespace dnntune::train
