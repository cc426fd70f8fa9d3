// model/convolution_algorithm.hpp — the convolution algorithm cuDNN runs for a layer pass, by
// precision and shape, and what it saves. A convolution's FLOPs (workloads/costs.hpp) count the
// direct convolution's multiply-adds; Winograd and FFT algorithms do fewer multiplications for
// the same result, so a GPU that runs them computes the pass faster than its direct FLOPs at the
// kernel's share of peak would allow:
//
//   * Winograd F(2x2,3x3) for dense 3x3 stride-1 convolutions in fp32: 16 multiplications per
//     2x2 output tile where the direct convolution does 36, 2.25x fewer (Lavin and Gray, "Fast
//     Algorithms for Convolutional Neural Networks", CVPR 2016; cuDNN's WINOGRAD algorithms since
//     cuDNN 5, 2016);
//   * FFT (cuDNN's FFT_TILING, 32x32 tiles) for dense stride-1 kernels of 5x5 and larger in fp32:
//     a complex product per frequency bin and channel pair (4 real multiplications, 32^2 bins per
//     (33-K)^2 outputs) against K^2 multiplications per output (Mathieu, Henaff and LeCun, "Fast
//     Training of Convolutional Networks through FFTs", ICLR 2014; Vasilache et al., "Fast
//     Convolutional Nets With fbfft", ICLR 2015);
//   * implicit GEMM everywhere else, and for every convolution on tensor cores (TF32, bf16, fp16):
//     cuDNN's tensor-core kernels are implicit GEMMs (NVIDIA's cuDNN developer guide, "Tensor Core
//     Operations"), which do the direct convolution's arithmetic.
//
// By GPU generation: cuDNN 5 to 7 (Kepler to Turing, the studies' era) picked Winograd and FFT
// for fp32 where they paid. On Ampere and Hopper fp32 convolutions are taken as implicit GEMM: the
// H200 measured here trained resnet50 b64 in strict fp32 at 940 images/s (cuDNN 9,
// measured/h200-2026-12-04), below even the implicit-GEMM priors' 1,066, so no saving shows
// there. An unknown generation gets none either (the priors as they were).
//
// The arithmetic saving is an upper bound of the speed-up: the transforms stream the tiles through
// memory and add their own arithmetic. The algorithm is chosen by timing (PyTorch's
// cudnn.benchmark, TensorFlow's autotuning), so it is never slower than implicit GEMM. The
// realized speed-up is therefore between 1 and the saving; with no published figure for a typical
// layer, the prior is their geometric middle (2.25 -> 1.5), the range the two ends.
#pragma once

#include <string>

#include "model/gpu_precision.hpp"
#include "workloads/layer.hpp"

namespace dnntune::model {

enum class ConvolutionAlgorithm { implicit_gemm, winograd, fft };

// Multiplications of the direct convolution per multiplication of Winograd F(2x2,3x3): 36 / 16.
constexpr double winograd_f2x2_3x3_arithmetic_saving = 2.25;
// ... and of F(4x4,3x3), 144 / 36: the largest Winograd tile cuDNN or oneDNN uses for fp32, so the
// most any of their 3x3 algorithms saves.
constexpr double winograd_f4x4_3x3_arithmetic_saving = 4.0;
// The fewest products an FFT convolution does per output and input channel: a real signal needs
// half its spectrum, 4 real products per complex one, so about 2 where the direct convolution does
// kh x kw: a saving of at most kh x kw / 2.
constexpr double fft_products_per_output = 2.0;
// The FFT's tile edge (cuDNN's FFT_TILING) and the smallest kernel it pays for (a 3x3 saves more
// by Winograd: 2.25 against the FFT's 2.0).
constexpr int fft_tile_edge = 32;
constexpr int fft_smallest_kernel = 5;

struct ConvolutionAlgorithmChoice {
  ConvolutionAlgorithm algorithm = ConvolutionAlgorithm::implicit_gemm;
  double arithmetic_saving = 1;              // the direct convolution's multiplications over the algorithm's
  double speedup = 1;                        // the prior: the geometric middle of 1 and the saving
  double speedup_low = 1, speedup_high = 1;  // its range: no gain, the whole saving
};

// Whether cuDNN on this generation (GpuNode::architecture: "kepler" .. "hopper") runs fp32
// convolutions as Winograd and FFT where they pay.
bool runs_fp32_winograd_and_fft(const std::string& architecture);

// What cuDNN runs for a dense (ungrouped) convolution `spec` in `precision` on a GPU of
// `architecture`; implicit GEMM for any other layer. The same in every pass (cuDNN has Winograd
// and FFT kernels for forward, backward-data and backward-weights).
ConvolutionAlgorithmChoice cudnn_convolution_algorithm(const workloads::LayerSpec& spec, GpuPrecision precision,
                                                       const std::string& architecture);

// The FFT's saving for a KxK kernel on fft_tile_edge tiles: K^2 (T-K+1)^2 / (4 T^2).
double fft_arithmetic_saving(int kernel);

const char* convolution_algorithm_name(ConvolutionAlgorithm algorithm);

// The most any library's algorithm can save on one layer shape's arithmetic, whatever the GPU or
// CPU and its heuristics pick: 1 for everything but a stride-1, undilated convolution of a kernel
// larger than 1x1 (then Winograd F(4x4,3x3)'s or the FFT's saving, the larger). A measured or
// predicted pass may time up to this many times above the direct-FLOP peak, never more: the
// physical gate's bound (model/plausibility.hpp), where cudnn_convolution_algorithm is the prior.
double arithmetic_saving_bound(const workloads::LayerSpec& spec);

}  // namespace dnntune::model
