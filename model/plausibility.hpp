// model/plausibility.hpp — the physical-plausibility gate: every answer the model gives (a CPU or
// GPU prediction, and through them every command and the Python module) and every measured time
// it reads passes here, against what the hardware can do. Nothing faster than the roofline (the
// network's FLOPs per image at the fewest an algorithm can do them, over the peaks of the cores
// or GPUs of every node), nothing slower than a stated floor, and no band so wide that it says
// nothing. A peak, bandwidth or link outside what real hardware spans is refused where it is read
// (records/record_bounds.hpp holds those ranges with their sources).
#pragma once

#include <cstdint>
#include <string>

#include "common/expected.hpp"
#include "model/convolution_algorithm.hpp"
#include "model/gpu_layer_time.hpp"
#include "model/gpu_node.hpp"
#include "records/machine_profile.hpp"
#include "records/record_bounds.hpp"
#include "workloads/graph.hpp"

namespace dnntune::model {

// --- the algorithms: how far below a layer's direct FLOPs a library's kernel may go ---
// (arithmetic_saving_bound per shape: model/convolution_algorithm.hpp.)
// The same bound for a GPU kernel class's efficiency (of the peak, per pass): Winograd's for the
// dense and grouped convolutions that hold stride-1 3x3 kernels, 1 for a GEMM (matmul, 1x1 and
// strided 1x1 convolutions, the thin first layer's stride-2 7x7), which no algorithm saves
// arithmetic on, and for the streaming classes.
double gpu_class_saving_bound(GpuKernelClass kernel_class);

// --- the roofline and the floor ---
// The fewest FLOPs one training step of `batch` images can take: every layer pass the network
// runs, at its FLOPs over its arithmetic_saving_bound. 0 when the batch is outside 1..max_batch.
double least_step_flops(const workloads::Network& network, std::int64_t batch);
// The most FLOP/s `cores` cores of a CPU node do by its profile (its FP32 peak per core); 0 when
// the profile states none (no roofline then).
double cpu_peak_flops(const records::MachineProfile& profile, int cores);
// The most FLOP/s one GPU does: its highest peak of any precision.
double gpu_highest_peak_flops(const GpuNode& node);
// The longest step an answer may take: as long as any record may hold (11.6 days). A longer one is
// not a slow machine but figures the model cannot use (a link of 1e-300 Gb/s made it 1.8e62 s).
constexpr double longest_step_seconds = records::max_record_seconds;

// --- the band ---
// A 90% band whose high end is more than this many times its low end is reported as unknown,
// not as a figure: two orders of magnitude say only that the model does not know (the widest
// bands real answers give are spec machines' carried-over ones, about 7x; an interrupted first
// run once answered 0.2 - 77674320.3).
constexpr double widest_band_ratio = 100;
bool band_is_known(double low, double high);

// The figures of one answer, with the most images/s the roofline allows (0: none known).
struct AnswerFigures {
  double iteration_seconds = 0;
  double images_per_second = 0;
  double band_low = 0;
  double band_high = 0;
  double roofline_images_per_second = 0;
};
// The gate every answer passes: finite and above 0 (a band's low end may be 0, an unknown band),
// no faster than the roofline, no step longer than longest_step_seconds. A failure (exit 1: the
// model's fault, the inputs having passed their own checks) naming `what` and the figure.
Expected<void> check_answer(const std::string& what, const AnswerFigures& figures);
// The band's high end held at the roofline: no part of an answer is faster than the hardware.
void hold_band_at_roofline(AnswerFigures& figures);

// --- what is read ---
// A measured step of `network` (a trained anchor, a setup PyTorch timed) on `processes x threads`
// cores of one node of `profile`: refused (bad input naming origin and field) when faster than
// the roofline of those cores. Nothing to check when the profile states no peak.
Expected<void> check_measured_step(const workloads::Network& network, std::int64_t batch_per_process, int processes,
                                   int threads, double step_seconds, const records::MachineProfile& profile,
                                   const std::string& origin, const std::string& field);
// A GPU calibration's compute efficiency of a class: finite, above 0, and no higher than the
// class's algorithms can reach (gpu_class_saving_bound).
Expected<void> check_gpu_efficiency(double efficiency, GpuKernelClass kernel_class, const std::string& origin,
                                    const std::string& field);

}  // namespace dnntune::model
