// train/optimizer.hpp — the trainer's SGD with momentum, stepped as PyTorch steps it: on a GPU
// torch.optim.SGD's default since PyTorch 2.0 (foreach) updates every parameter in a few
// multi-tensor kernels; on the CPU it goes one tensor at a time (libtorch's torch::optim::SGD,
// what torch.optim.SGD does there). libtorch 1.13's C++ SGD only goes one tensor at a time, and on
// an H200 its kernel launches cost about 17.5 us a tensor, 4-19% of a ResNet step
// (docs/results.md, "The GPU model").
//   momentum buffer = momentum x buffer + gradient   (the gradient itself on the first step)
//   parameter      -= learning rate x buffer
// A light header: libtorch's tensor is only named.
#pragma once

#include <memory>
#include <vector>

namespace at {
class Tensor;
}

namespace dnntune::train {

class SgdWithMomentum {
 public:
  // `multi_tensor`: the foreach update (what the trainer uses on a GPU); else one tensor at a time.
  SgdWithMomentum(std::vector<at::Tensor> parameters, double learning_rate, double momentum, bool multi_tensor);
  ~SgdWithMomentum();
  SgdWithMomentum(SgdWithMomentum&&) noexcept;
  SgdWithMomentum& operator=(SgdWithMomentum&&) noexcept;
  // One update from the parameters' gradients (every parameter has one).
  void step();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace dnntune::train
