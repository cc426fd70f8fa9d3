// train/precision.cpp — see precision.hpp: what calls libtorch (built into the libtorch module,
// torch_module/; the words' rules are precision_rules.cpp).
#include "train/precision.hpp"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>

// PyTorch 2.4 named autocast's state per device type (set_autocast_enabled(kCUDA, on)); the
// GPU-only functions of 1.x were deprecated then.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define DNNTUNE_AUTOCAST_PER_DEVICE 1
#endif

namespace dnntune::train {

namespace {

bool is_autocast(const std::string& precision) { return precision == "bf16" || precision == "fp16"; }

bool gpu_autocast_enabled() {
#ifdef DNNTUNE_AUTOCAST_PER_DEVICE
  return at::autocast::is_autocast_enabled(at::kCUDA);
#else
  return at::autocast::is_enabled();
#endif
}

at::ScalarType gpu_autocast_dtype() {
#ifdef DNNTUNE_AUTOCAST_PER_DEVICE
  return at::autocast::get_autocast_dtype(at::kCUDA);
#else
  return at::autocast::get_autocast_gpu_dtype();
#endif
}

void set_gpu_autocast(bool enabled, at::ScalarType dtype) {
#ifdef DNNTUNE_AUTOCAST_PER_DEVICE
  at::autocast::set_autocast_dtype(at::kCUDA, dtype);
  at::autocast::set_autocast_enabled(at::kCUDA, enabled);
#else
  at::autocast::set_autocast_gpu_dtype(dtype);
  at::autocast::set_enabled(enabled);
#endif
}

}  // namespace

void apply_cuda_math_settings(const std::string& precision) {
  if (!torch::cuda::is_available()) return;
  at::globalContext().setBenchmarkCuDNN(true);
  at::globalContext().setAllowTF32CuDNN(precision != "fp32");
  at::globalContext().setAllowTF32CuBLAS(false);
}

AutocastScope::AutocastScope(const std::string& precision) {
  if (!is_autocast(precision) || !torch::cuda::is_available()) return;
  active_ = true;
  was_enabled_ = gpu_autocast_enabled();
  previous_dtype_ = static_cast<int>(gpu_autocast_dtype());
  set_gpu_autocast(true, precision == "bf16" ? at::kBFloat16 : at::kHalf);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // As torch.autocast's __exit__: the cast weights are cached for the scope's length only.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_gpu_autocast(was_enabled_, static_cast<at::ScalarType>(previous_dtype_));
}

void to_channels_last(std::vector<at::Tensor>& parameters) {
  torch::NoGradGuard no_grad;
  for (auto& parameter : parameters)
    if (parameter.dim() == 4) parameter.set_data(parameter.contiguous(at::MemoryFormat::ChannelsLast));
}

DynamicLossScaler::DynamicLossScaler(LossScalerSettings settings)
    : settings_(settings), scale_(settings.initial_scale) {}

at::Tensor DynamicLossScaler::scale(const at::Tensor& loss) const { return loss * scale_; }

bool DynamicLossScaler::unscale(const std::vector<at::Tensor>& parameters) const {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> gradients;
  for (const auto& parameter : parameters)
    if (parameter.grad().defined()) gradients.push_back(parameter.grad());
  if (gradients.empty()) return true;
  const auto options = torch::TensorOptions().dtype(torch::kFloat).device(gradients.front().device());
  at::Tensor found_inf = torch::zeros({1}, options);
  const at::Tensor inverse = torch::full({1}, 1.0 / scale_, options);
  if (gradients.front().is_cuda()) {
    // PyTorch's own fused kernel, as GradScaler.unscale_ calls it (CUDA only in libtorch 1.x).
    at::_amp_foreach_non_finite_check_and_unscale_(gradients, found_inf, inverse);
  } else {
    for (auto& gradient : gradients) {
      found_inf.add_(torch::isfinite(gradient).logical_not().any().to(torch::kFloat));
      gradient.mul_(inverse);
    }
  }
  return found_inf.item<float>() == 0.0f;
}

void DynamicLossScaler::update(bool all_finite) {
  if (!all_finite) {
    scale_ *= settings_.backoff_factor;
    finite_in_a_row_ = 0;
    ++skipped_;
    return;
  }
  if (++finite_in_a_row_ >= settings_.growth_interval) {
    scale_ *= settings_.growth_factor;
    finite_in_a_row_ = 0;
  }
}

}  // namespace dnntune::train
