// train/optimizer.cpp — see optimizer.hpp.
#include "train/optimizer.hpp"

#include <optional>
#include <utility>

#include <torch/torch.h>

namespace dnntune::train {

struct SgdWithMomentum::State {
  std::vector<at::Tensor> parameters, buffers;
  double learning_rate = 0, momentum = 0;
  std::optional<torch::optim::SGD> per_tensor;
};

SgdWithMomentum::SgdWithMomentum(std::vector<at::Tensor> parameters, double learning_rate, double momentum,
                                 bool multi_tensor)
    : state_(std::make_unique<State>()) {
  state_->learning_rate = learning_rate;
  state_->momentum = momentum;
  if (multi_tensor)
    state_->parameters = std::move(parameters);
  else
    state_->per_tensor.emplace(std::move(parameters), torch::optim::SGDOptions(learning_rate).momentum(momentum));
}

SgdWithMomentum::~SgdWithMomentum() = default;
SgdWithMomentum::SgdWithMomentum(SgdWithMomentum&&) noexcept = default;
SgdWithMomentum& SgdWithMomentum::operator=(SgdWithMomentum&&) noexcept = default;

void SgdWithMomentum::step() {
  if (state_->per_tensor) {
    state_->per_tensor->step();
    return;
  }
  const torch::NoGradGuard no_grad;
  std::vector<at::Tensor> gradients;
  gradients.reserve(state_->parameters.size());
  for (const at::Tensor& parameter : state_->parameters) gradients.push_back(parameter.grad());
  if (state_->momentum == 0) {
    at::_foreach_add_(state_->parameters, gradients, -state_->learning_rate);
    return;
  }
  if (state_->buffers.empty()) {
    for (const at::Tensor& gradient : gradients) state_->buffers.push_back(gradient.clone());
  } else {
    at::_foreach_mul_(state_->buffers, state_->momentum);
    at::_foreach_add_(state_->buffers, gradients);
  }
  at::_foreach_add_(state_->parameters, state_->buffers, -state_->learning_rate);
}

}  // namespace dnntune::train
