// train/precision.hpp — the arithmetic a training step runs in on a GPU, set as PyTorch users set
// it, and the dynamic loss scaling that fp16 needs (torch.cuda.amp.GradScaler's semantics;
// libtorch has no GradScaler class).
//
//   fp32  strict: cuDNN and cuBLAS in full fp32 (allow_tf32 off for both);
//   tf32  PyTorch's default on a GPU of compute capability 8.0 or later: cuDNN convolutions on
//         TF32 tensor cores (cudnn.allow_tf32 True), matmul in full fp32 (matmul.allow_tf32 False
//         since PyTorch 1.12);
//   bf16, fp16  autocast of the forward pass (the weights and the optimizer stay fp32); fp16 also
//         scales the loss (DynamicLossScaler).
// A light header: libtorch's tensor is only named. The words' rules (is_precision to
// check_precision_options) are precision_rules.cpp, in `train`; the rest calls libtorch and is built
// into the libtorch module (precision.cpp, torch_module/).
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"

namespace at {
class Tensor;
}

namespace dnntune::train {

// --precision's words, and "auto": tf32 on a GPU that has it, else fp32.
bool is_precision(const std::string& word);
// --memory-format's words: "contiguous" (NCHW) or "channels_last" (NHWC, what tensor cores want).
bool is_memory_format(const std::string& word);

// The precision `asked` ("auto" or a word) on a step that runs on a CUDA GPU of compute capability
// `compute_major` (0: unknown) or on the CPU. "auto" is tf32 from Ampere (8.x) on, else fp32.
std::string resolve_precision(const std::string& asked, bool on_cuda, int compute_major);

// The compute capability's major number of CUDA device `index`; 0 where there is no CUDA runtime or
// no such device.
int cuda_compute_capability_major(int index);

// Refuses, with one line, what the trainer cannot run: a word it does not know, and on the CPU
// every precision but fp32 (tf32 is a tensor-core mode; Debian's CPU libtorch runs bf16 autocast
// far slower than fp32 on CPUs without bf16 units, and the CPU model knows only fp32). channels_last
// runs on both (oneDNN takes NHWC too). `device` is "cpu", "cuda" or "auto" (judged when resolved).
Expected<void> check_precision_options(const std::string& precision, const std::string& memory_format,
                                       const std::string& device);

// Sets this process's cuDNN and cuBLAS flags for `precision` (resolved): cudnn.benchmark on (what
// GPU users set: each convolution's fastest algorithm is searched in the first step), TF32 for
// cuDNN for every precision but strict fp32, never for matmul. No effect without a GPU.
void apply_cuda_math_settings(const std::string& precision);

// Autocast of the ops run while it lives, on the GPU, to bf16 or fp16 (nothing for fp32 and tf32),
// as `with torch.autocast("cuda", dtype)`: enter around the forward pass and the loss, never the
// backward.
class AutocastScope {
 public:
  explicit AutocastScope(const std::string& precision);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  bool was_enabled_ = false;
  int previous_dtype_ = 0;
};

// Puts every 4-D parameter (convolution weights) in channels_last, in place: the module's
// parameters stay the same tensors (their optimizer and gradient hooks still hold them).
void to_channels_last(std::vector<at::Tensor>& parameters);

// torch.cuda.amp.GradScaler's defaults.
struct LossScalerSettings {
  double initial_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int growth_interval = 2000;  // finite steps in a row before the scale grows
};

// Dynamic loss scaling for fp16: the loss is multiplied by the scale before backward (small
// gradients would flush to zero in fp16), the gradients are divided by it before the step, and a
// step whose gradients hold an inf or a NaN is skipped and halves the scale; growth_interval
// finite steps in a row double it.
class DynamicLossScaler {
 public:
  explicit DynamicLossScaler(LossScalerSettings settings = {});
  at::Tensor scale(const at::Tensor& loss) const;
  // Divides every defined gradient of `parameters` by the scale, in place; true when all are
  // finite (the optimizer may step). One host synchronisation.
  bool unscale(const std::vector<at::Tensor>& parameters) const;
  // After each step, taken (`all_finite`) or skipped: the scale's growth and backoff.
  void update(bool all_finite);
  double current_scale() const { return scale_; }
  int skipped_steps() const { return skipped_; }

 private:
  LossScalerSettings settings_;
  double scale_;
  int finite_in_a_row_ = 0;
  int skipped_ = 0;
};

}  // namespace dnntune::train
