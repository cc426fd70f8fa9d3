// model/gpu_precision.hpp — the numerics a GPU trains in: the precision of the math (strict fp32,
// TF32 tensor cores for convolutions — PyTorch's default on Ampere and later — or bf16 / fp16
// autocast) and the memory format of the activations (contiguous NCHW or channels_last NHWC).
// Which peak each kernel class runs at under each precision, which precisions a GPU has, and what
// a training script must set to get them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace dnntune::model {

enum class GpuPrecision { fp32, tf32, bf16, fp16, count_ };
constexpr int gpu_precision_count = static_cast<int>(GpuPrecision::count_);
enum class GpuMemoryFormat { contiguous, channels_last };

std::string gpu_precision_name(GpuPrecision precision);             // "fp32", "tf32", "bf16", "fp16"
std::string gpu_memory_format_name(GpuMemoryFormat memory_format);  // "contiguous", "channels_last"
// bad_input naming the choices for anything else.
Expected<GpuPrecision> parse_gpu_precision(const std::string& text);
Expected<GpuMemoryFormat> parse_gpu_memory_format(const std::string& text);

// Autocast (bf16, fp16): activations and their gradients are 2 bytes; weights, their gradients
// and the optimizer's state stay fp32.
bool is_mixed_precision(GpuPrecision precision);
double activation_bytes_ratio(GpuPrecision precision);  // of the fp32 bytes workloads/costs.hpp counts

// What the training script must set for this pick (PyTorch), one line each. On a GPU without
// TF32 tensor cores (before Ampere) strict fp32 is all PyTorch runs, so nothing about TF32 is said.
std::vector<std::string> gpu_script_settings(GpuPrecision precision, GpuMemoryFormat memory_format,
                                             bool gpu_has_tf32 = true);

}  // namespace dnntune::model
