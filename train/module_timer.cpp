// train/module_timer.cpp — see module_timer.hpp.
#include "train/module_timer.hpp"

#include <torch/torch.h>

#include <algorithm>

#include "probe/timing.hpp"

namespace dnntune::train {

ModuleTimer::ModuleTimer(std::size_t layers) : step_forward_(layers, -1), forward_(layers), backward_(layers) {}

void ModuleTimer::begin_step() {
  forward_sum_ = 0;
  std::fill(step_forward_.begin(), step_forward_.end(), -1.0);
  marks_.clear();
}

void ModuleTimer::forward_done(std::size_t layer, double seconds) {
  step_forward_[layer] = seconds;
  forward_sum_ += seconds;
}

void ModuleTimer::watch_backward(std::size_t layer, at::Tensor& output) {
  if (!output.requires_grad()) return;
  output.register_hook([this, layer](const at::Tensor&) { marks_.push_back({layer, probe::now_seconds()}); });
}

void ModuleTimer::end_step(double backward_end) {
  for (std::size_t layer = 0; layer < step_forward_.size(); ++layer)
    if (step_forward_[layer] >= 0) forward_[layer].push_back(step_forward_[layer]);
  forward_sums_.push_back(forward_sum_);
  // A layer whose hook fires more than once in a step (its output rewritten in place after the
  // hook was registered) gets every interval that follows one of its marks.
  std::vector<double> step_backward(backward_.size(), -1.0);
  double sum = 0;
  for (std::size_t k = 0; k < marks_.size(); ++k) {
    const double until = k + 1 < marks_.size() ? marks_[k + 1].at : backward_end;
    double& seconds = step_backward[marks_[k].layer];
    seconds = std::max(seconds, 0.0) + (until - marks_[k].at);
    sum += until - marks_[k].at;
  }
  for (std::size_t layer = 0; layer < step_backward.size(); ++layer)
    if (step_backward[layer] >= 0) backward_[layer].push_back(step_backward[layer]);
  backward_sums_.push_back(sum);
}

void ModuleTimer::scale(double forward_factor, double backward_factor) {
  const auto multiply = [](std::vector<double>& values, double factor) {
    for (double& value : values) value *= factor;
  };
  for (auto& layer : forward_) multiply(layer, forward_factor);
  for (auto& layer : backward_) multiply(layer, backward_factor);
  multiply(forward_sums_, forward_factor);
  multiply(backward_sums_, backward_factor);
}

}  // namespace dnntune::train
