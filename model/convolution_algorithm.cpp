// model/convolution_algorithm.cpp — see convolution_algorithm.hpp.
#include "model/convolution_algorithm.hpp"

#include <algorithm>
#include <cmath>

namespace dnntune::model {
namespace {

ConvolutionAlgorithmChoice saving_of(ConvolutionAlgorithm algorithm, double arithmetic_saving) {
  ConvolutionAlgorithmChoice choice;
  choice.algorithm = algorithm;
  choice.arithmetic_saving = arithmetic_saving;
  choice.speedup = std::sqrt(arithmetic_saving);
  choice.speedup_low = 1;
  choice.speedup_high = arithmetic_saving;
  return choice;
}

}  // namespace

double fft_arithmetic_saving(int kernel) {
  const double tile = fft_tile_edge, outputs = tile - kernel + 1;
  return static_cast<double>(kernel) * kernel * outputs * outputs / (4 * tile * tile);
}

bool runs_fp32_winograd_and_fft(const std::string& architecture) {
  for (const char* generation : {"kepler", "maxwell", "pascal", "volta", "turing"})
    if (architecture == generation) return true;
  return false;
}

ConvolutionAlgorithmChoice cudnn_convolution_algorithm(const workloads::LayerSpec& spec, GpuPrecision precision,
                                                       const std::string& architecture) {
  const bool dense = spec.kind == workloads::LayerKind::convolution && spec.groups <= 1 && spec.dilation_h == 1 &&
                     spec.dilation_w == 1 && spec.stride_h == 1 && spec.stride_w == 1;
  // Tensor cores run implicit GEMM only; Winograd and FFT are fp32 algorithms.
  if (!dense || precision != GpuPrecision::fp32 || !runs_fp32_winograd_and_fft(architecture)) return {};
  if (spec.kernel_h == 3 && spec.kernel_w == 3)
    return saving_of(ConvolutionAlgorithm::winograd, winograd_f2x2_3x3_arithmetic_saving);
  if (spec.kernel_h == spec.kernel_w && spec.kernel_h >= fft_smallest_kernel && spec.kernel_h < fft_tile_edge)
    return saving_of(ConvolutionAlgorithm::fft, fft_arithmetic_saving(static_cast<int>(spec.kernel_h)));
  return {};
}

const char* convolution_algorithm_name(ConvolutionAlgorithm algorithm) {
  switch (algorithm) {
    case ConvolutionAlgorithm::winograd:
      return "winograd";
    case ConvolutionAlgorithm::fft:
      return "fft";
    case ConvolutionAlgorithm::implicit_gemm:
      return "implicit_gemm";
  }
  return "implicit_gemm";
}

double arithmetic_saving_bound(const workloads::LayerSpec& spec) {
  if (spec.kind != workloads::LayerKind::convolution) return 1;
  const bool unit_stride = spec.stride_h == 1 && spec.stride_w == 1 && spec.dilation_h == 1 && spec.dilation_w == 1;
  const double area = static_cast<double>(spec.kernel_h) * static_cast<double>(spec.kernel_w);
  if (!unit_stride || area <= 1) return 1;
  const double winograd = spec.kernel_h == 3 && spec.kernel_w == 3 ? winograd_f4x4_3x3_arithmetic_saving : 1;
  return std::max({1.0, winograd, area / fft_products_per_output});
}

}  // namespace dnntune::model
