// train/torch_network.hpp — a workload graph (workloads::Network) as libtorch modules that
// train exactly as torchvision's model would: Conv2d, BatchNorm2d (training mode) and Linear
// modules under torchvision's module paths ("layer1.0.conv1.weight"), PyTorch's default
// initialisation, and a forward pass that walks the DAG in the graph's order with the same
// functional ops (in-place ReLU where torchvision has it, dropout in training mode, the
// cross-entropy loss). Its parameter count equals the workload's.
//
// The header is light on purpose: it names libtorch's types without including libtorch, so that
// only the few sources that already use libtorch pay for it. Callers of forward() include
// <torch/torch.h> themselves.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/expected.hpp"
#include "workloads/graph.hpp"

namespace at {
class Tensor;
}
namespace torch::nn {
class Module;
}

namespace dnntune::train {

class ModuleTimer;  // train/module_timer.hpp

class TorchNetwork {
 public:
  // Builds the modules of every layer that has parameters, on the CPU (move with
  // module().to(device)). Fails on a network without a loss layer or without parameters (there
  // is nothing to train), and on what libtorch refuses (out of memory).
  static Expected<TorchNetwork> build(const workloads::Network& network);

  TorchNetwork(TorchNetwork&&) noexcept;
  TorchNetwork& operator=(TorchNetwork&&) noexcept;
  ~TorchNetwork();

  // The training loss for a batch: images N x C x H x W of the network's input shape, labels N
  // class indices (int64) on the same device. The sum of the network's loss layers (Inception-v3
  // has two), each the mean over the batch, as torch.nn.CrossEntropyLoss.
  at::Tensor forward(const at::Tensor& images, const at::Tensor& labels);

  // Times each layer's op in forward() and hooks its output's gradient (module_timer.hpp) while
  // `timer` is set; null (the default) times nothing. The timer outlives the steps it times.
  void set_module_timer(ModuleTimer* timer);

  // The learnable parameters, in the order of the layers that own them (the forward order).
  std::vector<at::Tensor> parameters() const;
  // The same with torchvision's names ("conv1.weight", "layer1.0.bn1.bias").
  std::vector<std::pair<std::string, at::Tensor>> named_parameters() const;
  std::int64_t parameter_count() const;
  // The classes the (first) loss layer scores: labels are drawn from [0, classes).
  std::int64_t classes() const;

  // The root module: train()/eval(), to(device), buffers (batch-norm running statistics).
  torch::nn::Module& module();
  const workloads::Network& network() const;

 private:
  struct Graph;
  explicit TorchNetwork(std::unique_ptr<Graph> graph);
  std::unique_ptr<Graph> graph_;
};

}  // namespace dnntune::train
