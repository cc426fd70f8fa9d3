// tests/train_precision_test.cpp — the trainer's precision rules (train/precision.hpp) on the CPU:
// what "auto" means on which device, what the CPU refuses, GradScaler's semantics of the dynamic
// loss scaler (skip on inf/NaN, back off, grow), and channels_last weights that stay the module's
// own tensors. The GPU paths (autocast, cuDNN flags) only compile here: CI has no GPU.
#include "tests/torch_catch.hpp"

#include <limits>

#include "train/precision.hpp"

using namespace dnntune::train;

TEST_CASE("auto precision is tf32 on a GPU of compute capability 8.0 or later, else fp32") {
  CHECK(resolve_precision("auto", true, 9) == "tf32");
  CHECK(resolve_precision("auto", true, 8) == "tf32");
  CHECK(resolve_precision("auto", true, 7) == "fp32");  // a V100 has no TF32
  CHECK(resolve_precision("auto", true, 0) == "fp32");  // unknown
  CHECK(resolve_precision("auto", false, 9) == "fp32");
  CHECK(resolve_precision("bf16", true, 9) == "bf16");
  CHECK(resolve_precision("fp32", true, 9) == "fp32");
}

TEST_CASE("precision words are checked, and the CPU runs fp32 only, in either memory format") {
  CHECK(check_precision_options("auto", "contiguous", "cpu"));
  CHECK(check_precision_options("fp32", "channels_last", "cpu"));
  CHECK(check_precision_options("fp16", "channels_last", "cuda"));
  CHECK(check_precision_options("bf16", "contiguous", "auto"));  // judged once the device is known
  const auto cpu_bf16 = check_precision_options("bf16", "contiguous", "cpu");
  REQUIRE_FALSE(cpu_bf16);
  CHECK(cpu_bf16.error().message.find("--device cuda") != std::string::npos);
  CHECK_FALSE(check_precision_options("tf32", "contiguous", "cpu"));
  CHECK_FALSE(check_precision_options("fp8", "contiguous", "cuda"));
  CHECK_FALSE(check_precision_options("fp32", "nhwc", "cuda"));
  CHECK(cuda_compute_capability_major(0) >= 0);  // 0 here: no GPU
}

TEST_CASE("the loss scaler unscales finite gradients and lets the step run") {
  DynamicLossScaler scaler({/*initial_scale=*/8, 2, 0.5, /*growth_interval=*/3});
  torch::Tensor weight = torch::ones({2, 2}, torch::requires_grad());
  const torch::Tensor loss = (weight * 3).sum();
  const torch::Tensor scaled = scaler.scale(loss);
  CHECK(scaled.item<float>() == Approx(8 * 12));
  scaled.backward();
  CHECK(weight.grad()[0][0].item<float>() == Approx(24));
  CHECK(scaler.unscale({weight}));
  CHECK(weight.grad()[0][0].item<float>() == Approx(3));
  scaler.update(true);
  scaler.update(true);
  CHECK(scaler.current_scale() == 8);
  scaler.update(true);  // the third finite step in a row grows it
  CHECK(scaler.current_scale() == 16);
  CHECK(scaler.skipped_steps() == 0);
}

TEST_CASE("the loss scaler finds an inf or NaN gradient, skips the step and halves the scale") {
  DynamicLossScaler scaler;
  CHECK(scaler.current_scale() == 65536);
  torch::Tensor a = torch::zeros({3}, torch::requires_grad());
  torch::Tensor b = torch::zeros({3}, torch::requires_grad());
  a.mutable_grad() = torch::ones({3});
  b.mutable_grad() = torch::tensor({1.0f, std::numeric_limits<float>::infinity(), 1.0f});
  CHECK_FALSE(scaler.unscale({a, b}));
  scaler.update(false);
  CHECK(scaler.current_scale() == 32768);
  CHECK(scaler.skipped_steps() == 1);
  b.mutable_grad() = torch::tensor({std::numeric_limits<float>::quiet_NaN(), 0.0f, 0.0f});
  CHECK_FALSE(scaler.unscale({a, b}));
  torch::Tensor no_gradient = torch::zeros({3}, torch::requires_grad());  // a parameter backward did not reach
  b.mutable_grad() = torch::ones({3});
  CHECK(scaler.unscale({a, b, no_gradient}));
}

TEST_CASE("channels_last converts the 4-D weights in place and leaves the rest") {
  torch::Tensor convolution = torch::randn({8, 3, 3, 3}, torch::requires_grad());
  torch::Tensor bias = torch::randn({8}, torch::requires_grad());
  const torch::Tensor before = convolution.detach().clone();
  std::vector<torch::Tensor> parameters{convolution, bias};
  to_channels_last(parameters);
  CHECK(convolution.is_contiguous(at::MemoryFormat::ChannelsLast));  // the caller's handle sees it
  CHECK_FALSE(convolution.is_contiguous());
  CHECK(torch::equal(convolution.detach(), before));
  CHECK(bias.is_contiguous());
  { const AutocastScope none("bf16"); }  // no GPU: nothing to enable, nothing to undo
}
