// tests/model_gpu_test.cpp — the GPU model's math on hand-computed cases: the roofline of one
// layer pass with its utilisation and overheads, ring / tree / hierarchical all-reduce, buckets
// overlapped with the backward pass, the memory check, and the spec profiles' GPU nodes.
#include <catch2/catch.hpp>

#include <cmath>

#include "data/builtin_machines.hpp"
#include "tests/expected_support.hpp"
#include "model/gpu_calibration.hpp"
#include "model/gpu_communication.hpp"
#include "model/gpu_layer_time.hpp"
#include "model/gpu_node.hpp"
#include "model/gpu_predictor.hpp"
#include "tuner/gpu_recommendation.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune;
using dnntune::test::must;
using namespace dnntune::model;

namespace {

// 1 TFLOP/s, 100 GB/s, one SM, 16 GB: numbers a hand calculation can follow.
GpuNode hand_node() {
  GpuNode node;
  node.name = "hand";
  node.fp32_flops = 1e12;
  node.memory_bandwidth = 1e11;
  node.memory_bytes = 16e9;
  node.gpus_per_node = 4;
  node.multiprocessors = 1;
  node.intra_node = {0, 100, false, "hand"};
  return node;
}

// Every class at 50% of both peaks, one kernel per pass, no overheads, full utilisation.
GpuEfficiencies flat_efficiencies() {
  GpuEfficiencies efficiencies = gpu_efficiency_priors();
  for (auto& kernel_class : efficiencies.classes) kernel_class = {{0.5, 0.5, 0.5}, 0.5, 1};
  efficiencies.kernel_gap_seconds = 0;
  efficiencies.dispatch_seconds_per_op = 0;
  efficiencies.half_fill_threads_per_sm = 0;
  efficiencies.source = "hand";
  return efficiencies;
}

workloads::LayerSpec conv3x3_64_56() { return must(workloads::parse_descriptor("conv:ic64ih56iw56oc64kh3kw3sh1ph1")); }

}  // namespace

TEST_CASE("a dense 3x3 convolution is compute-bound at its roofline") {
  const auto spec = conv3x3_64_56();
  const auto cost = workloads::layer_cost(spec, 1).forward;
  // 64 x 56 x 56 outputs x 64 input channels x 9 taps = 115,605,504 multiply-adds.
  REQUIRE(cost.flops == 2 * 115605504LL);
  // Input and output 64 x 56 x 56 x 4 bytes, weights 64 x 64 x 9 x 4.
  REQUIRE(cost.bytes == 2 * 802816LL + 147456LL);
  const GpuPassTime time = gpu_pass_time(spec, workloads::Pass::forward, cost, 1, hand_node(), flat_efficiencies());
  CHECK(time.compute_seconds == Approx(231211008.0 / 0.5e12));
  CHECK(time.memory_seconds == Approx(1753088.0 / 0.5e11));
  CHECK(time.seconds == Approx(231211008.0 / 0.5e12));
  CHECK(time.limit == "compute");
  CHECK(time.utilisation == 1);
}

TEST_CASE("a small batch does not fill the chip: the utilisation curve") {
  GpuEfficiencies efficiencies = flat_efficiencies();
  efficiencies.half_fill_threads_per_sm = 1024;
  const auto spec = conv3x3_64_56();
  const auto cost = workloads::layer_cost(spec, 1).forward;
  const GpuPassTime one = gpu_pass_time(spec, workloads::Pass::forward, cost, 1, hand_node(), efficiencies);
  // 200,704 parallel outputs against 1,024 for half speed on one SM.
  CHECK(one.utilisation == Approx(200704.0 / (200704.0 + 1024.0)));
  CHECK(one.seconds == Approx(231211008.0 / 0.5e12 / one.utilisation));
  // Twice the batch: twice the work at a higher utilisation, so less than twice the time.
  const auto cost2 = workloads::layer_cost(spec, 2).forward;
  const GpuPassTime two = gpu_pass_time(spec, workloads::Pass::forward, cost2, 2, hand_node(), efficiencies);
  CHECK(two.utilisation > one.utilisation);
  CHECK(two.seconds < 2 * one.seconds);
}

TEST_CASE("a tiny kernel waits for the host's dispatch") {
  GpuEfficiencies efficiencies = flat_efficiencies();
  efficiencies.kernel_gap_seconds = 3e-6;
  efficiencies.dispatch_seconds_per_op = 10e-6;
  const auto spec = must(workloads::parse_descriptor("relu:ic8ih4iw4"));
  const auto cost = workloads::layer_cost(spec, 1).forward;
  // 128 elements read and written: 1,024 bytes at 50 GB/s = 20 ns, far below the 10 us dispatch.
  const GpuPassTime time = gpu_pass_time(spec, workloads::Pass::forward, cost, 1, hand_node(), efficiencies);
  CHECK(time.limit == "overhead");
  CHECK(time.seconds == Approx(10e-6));
  CHECK(time.overhead_seconds == Approx(10e-6 - 1024.0 / 0.5e11));
  // A view launches nothing and costs nothing.
  const auto flatten = must(workloads::parse_descriptor("flatten:ic512ih7iw7"));
  CHECK(gpu_pass_time(flatten, workloads::Pass::forward, workloads::layer_cost(flatten, 1).forward, 1, hand_node(),
                      efficiencies)
            .seconds == 0);
}

TEST_CASE("a kernel's fixed time adds to its roofline, batch norm in a step streams at cuDNN's bytes") {
  GpuEfficiencies efficiencies = flat_efficiencies();
  const auto spec = conv3x3_64_56();
  const auto cost = workloads::layer_cost(spec, 1).forward;
  efficiencies.classes[static_cast<int>(GpuKernelClass::convolution)].fixed_seconds = {20e-6, 0, 0};
  const GpuPassTime time = gpu_pass_time(spec, workloads::Pass::forward, cost, 1, hand_node(), efficiencies);
  CHECK(time.seconds == Approx(231211008.0 / 0.5e12 + 20e-6));
  CHECK(time.limit == "compute");
  // Batch norm: 64 x 56 x 56 = 200,704 elements. A micro-run (isolated) at the class's own memory
  // efficiency; in a step at the element-wise class's, over 1.5 x the counted bytes forward.
  const auto norm = must(workloads::parse_descriptor("bnorm:ic64ih56iw56"));
  const auto norm_cost = workloads::layer_cost(norm, 1).forward;
  REQUIRE(norm_cost.bytes == 4 * (2 * 200704LL + 4 * 64));
  efficiencies.classes[static_cast<int>(GpuKernelClass::normalization)].memory = 0.1;
  efficiencies.classes[static_cast<int>(GpuKernelClass::elementwise)].memory = 0.8;
  GpuNumerics isolated;
  isolated.isolated = true;
  const GpuPassTime alone =
      gpu_pass_time(norm, workloads::Pass::forward, norm_cost, 1, hand_node(), efficiencies, isolated);
  CHECK(alone.memory_seconds == Approx(norm_cost.bytes / (0.1 * 1e11)));
  const GpuPassTime in_step = gpu_pass_time(norm, workloads::Pass::forward, norm_cost, 1, hand_node(), efficiencies);
  CHECK(in_step.memory_seconds == Approx(1.5 * norm_cost.bytes / (0.8 * 1e11)));
  const auto norm_backward = workloads::layer_cost(norm, 1).backward_data;
  CHECK(
      gpu_pass_time(norm, workloads::Pass::backward_data, norm_backward, 1, hand_node(), efficiencies).memory_seconds ==
      Approx(norm_backward.bytes / (0.8 * 1e11)));
}

TEST_CASE("NCHW batch norm sums each channel in one block: few channels do not fill the chip") {
  GpuEfficiencies efficiencies = flat_efficiencies();
  GpuNode node = hand_node();
  node.multiprocessors = 128;  // full rate from 2 x 128 = 256 channels on
  const auto few = must(workloads::parse_descriptor("bnorm:ic64ih56iw56"));
  const auto many = must(workloads::parse_descriptor("bnorm:ic256ih28iw28"));
  const auto seconds_per_byte = [&](const workloads::LayerSpec& spec, workloads::Pass pass, GpuNumerics numerics) {
    const auto cost = workloads::layer_cost(spec, 1).pass(pass);
    return gpu_pass_time(spec, pass, cost, 1, node, efficiencies, numerics).memory_seconds / cost.bytes;
  };
  CHECK(native_normalization_slowdown(256, 128, workloads::Pass::forward) == Approx(1));
  for (const bool isolated : {true, false}) {
    GpuNumerics numerics;
    numerics.isolated = isolated;
    // 64 channels: the per-channel blocks at a quarter of the rate; forward they read 1 of the 3
    // passes over the data, backward (data: fused, and weights) all of them.
    CHECK(seconds_per_byte(few, workloads::Pass::forward, numerics) ==
          Approx((4.0 / 3 + 2.0 / 3) * seconds_per_byte(many, workloads::Pass::forward, numerics)));
    CHECK(seconds_per_byte(few, workloads::Pass::backward_data, numerics) ==
          Approx(4 * seconds_per_byte(many, workloads::Pass::backward_data, numerics)));
    CHECK(seconds_per_byte(few, workloads::Pass::backward_weights, numerics) ==
          Approx(4 * seconds_per_byte(many, workloads::Pass::backward_weights, numerics)));
    // Channels_last kernels split each channel's sums over many blocks.
    numerics.memory_format = GpuMemoryFormat::channels_last;
    CHECK(seconds_per_byte(few, workloads::Pass::backward_weights, numerics) ==
          Approx(seconds_per_byte(many, workloads::Pass::backward_weights, numerics)));
  }
}

TEST_CASE("kernel classes: dense, thin, grouped convolutions, GEMM, streaming") {
  CHECK(gpu_kernel_class(conv3x3_64_56()) == GpuKernelClass::convolution);
  CHECK(gpu_kernel_class(must(workloads::parse_descriptor("conv:ic3ih224iw224oc64kh7kw7sh2ph3"))) ==
        GpuKernelClass::convolution_thin);
  CHECK(gpu_kernel_class(must(workloads::parse_descriptor("conv:g32ic32ih112iw112oc32kh3kw3sh1ph1"))) ==
        GpuKernelClass::convolution_grouped);
  CHECK(gpu_kernel_class(must(workloads::parse_descriptor("conv:ic256ih56iw56oc64kh1kw1sh1ph0"))) ==
        GpuKernelClass::convolution_pointwise);
  // ResNet's downsampling shortcut: a 1x1 with a stride gathers every other pixel, no GEMM over the input.
  CHECK(gpu_kernel_class(must(workloads::parse_descriptor("conv:ic256ih56iw56oc512kh1kw1sh2ph0"))) ==
        GpuKernelClass::convolution_pointwise_strided);
  CHECK(gpu_kernel_class_name(GpuKernelClass::convolution_pointwise_strided) == "convolution_pointwise_strided");
  CHECK(uses_precision_peak(GpuKernelClass::convolution_pointwise_strided, GpuPrecision::tf32));
  CHECK(gpu_kernel_class(must(workloads::parse_descriptor("linear:ic2048oc1000bias1"))) == GpuKernelClass::matmul);
  CHECK(gpu_kernel_class(must(workloads::parse_descriptor("bnorm:ic64ih56iw56"))) == GpuKernelClass::normalization);
  CHECK(gpu_kernel_class_name(GpuKernelClass::pooling) == "pooling");
}

TEST_CASE("ring and double-binary-tree all-reduce") {
  const LinkModel link{1e-6, 100, false, "hand"};
  // Ring over 4: 6 steps of 1 us, 2 x 3/4 of 1 GB at 100 GB/s.
  CHECK(ring_allreduce_seconds(1e9, 4, link) == Approx(6e-6 + 0.015));
  // Tree over 8: 2 x 3 steps, twice the message.
  CHECK(tree_allreduce_seconds(1e9, 8, link) == Approx(6e-6 + 0.02));
  CHECK(ring_allreduce_seconds(1e9, 1, link) == 0);
  // NCCL's choice: the ring for large messages, the tree where latency dominates.
  CHECK(gpu_allreduce(1e9, 8, 1, link, link, 1).algorithm == "ring");
  const GpuAllReduce small = gpu_allreduce(1e3, 8, 1, link, link, 1);
  CHECK(small.algorithm == "tree");
  CHECK(small.seconds == Approx(6e-6 + 2e3 / 1e11));
  CHECK(gpu_allreduce(1e9, 1, 1, link, link, 1).seconds == 0);
}

TEST_CASE("hierarchical all-reduce: in the node over NVLink, each GPU's shard over the shared fabric") {
  const LinkModel nvlink{0, 100, false, "hand"};
  const LinkModel fabric{0, 10, false, "hand"};
  // 8 GPUs on each of 2 nodes, 4 ports per node: a GPU gets 10 x 4 / 8 = 5 GB/s of the fabric.
  // In the node: 2 x 7/8 x 8 GB / 100 GB/s = 0.14 s; across: a ring of 2 on 1 GB shards, 2 x 1/2 x 1 GB / 5 GB/s.
  const GpuAllReduce result = gpu_allreduce(8e9, 8, 2, nvlink, fabric, 4);
  CHECK(result.seconds == Approx(0.14 + 0.2));
  CHECK(result.algorithm == "ring in node + ring across nodes");
  // One GPU per node: only the fabric, at its full rate.
  CHECK(gpu_allreduce(8e9, 1, 2, nvlink, fabric, 4).seconds == Approx(8e9 / 10e9));
}

TEST_CASE("buckets overlap the backward pass, the last one is exposed") {
  const std::vector<BackwardStep> steps = {{1, 10}, {1, 10}, {1, 10}};
  // Each byte takes 0.1 s. Bucket 1 (20 bytes) closes at 2 s and ends at 4 s; bucket 2 (10
  // bytes) closes at 3 s, waits for the link until 4 s, ends at 5 s: 2 s after the backward.
  const BackwardOverlap overlap = overlap_with_backward(steps, 20, [](double bytes) { return 0.1 * bytes; });
  CHECK(overlap.buckets == 2);
  CHECK(overlap.communication_seconds == Approx(3));
  CHECK(overlap.exposed_seconds == Approx(2));
  // A fast link hides everything but the last bucket's reduction.
  const BackwardOverlap fast = overlap_with_backward(steps, 10, [](double bytes) { return 0.01 * bytes; });
  CHECK(fast.buckets == 3);
  CHECK(fast.exposed_seconds == Approx(0.1));
}

TEST_CASE("the spec profiles describe whole GPU nodes") {
  const GpuNode v100 = must(gpu_node(must(data::builtin_machine("v100"))));
  CHECK(v100.gpus_per_node == 8);
  CHECK(v100.multiprocessors == 80);
  CHECK(v100.fp32_flops == Approx(15.7e12));
  CHECK(v100.intra_node.bandwidth_gbs == Approx(120));
  CHECK(v100.tensor_flops.has_value());
  CHECK(v100.assumptions.empty());
  for (const char* name : {"k80", "p100", "v100", "a100", "h100", "h200"}) {
    const auto node = gpu_node(must(data::builtin_machine(name)));
    REQUIRE(node);
    CHECK(node->gpus_per_node >= 1);
    CHECK(node->intra_node.bandwidth_gbs > 0);
  }
  // A profile that names no node: one GPU, a default chip, and the prediction says so.
  records::MachineProfile bare = must(data::builtin_machine("v100"));
  bare.gpu->gpus_per_node = 0;
  bare.gpu->multiprocessors = 0;
  bare.gpu->interconnect.reset();
  const GpuNode assumed = must(gpu_node(bare));
  CHECK(assumed.gpus_per_node == 1);
  CHECK(assumed.assumptions.size() == 2);
  CHECK_FALSE(gpu_node(must(data::builtin_machine("skylake-8180"))));
}

TEST_CASE("predict_gpu: terms add up, bigger GPUs are faster, a batch that does not fit is excluded") {
  const auto network = must(workloads::load_network("resnet50"));
  const GpuEfficiencies priors = gpu_efficiency_priors();
  const GpuNode k80 = must(gpu_node(must(data::builtin_machine("k80"))));
  const GpuNode v100 = must(gpu_node(must(data::builtin_machine("v100"))));
  GpuConfiguration one;
  one.batch_per_gpu = 32;
  const GpuPrediction on_k80 = must(predict_gpu(network, k80, priors, one));
  const GpuPrediction on_v100 = must(predict_gpu(network, v100, priors, one));
  const GpuIterationTerms& t = on_v100.terms;
  CHECK(on_v100.iteration_seconds ==
        Approx(t.forward + t.backward + t.gradient_sums + t.optimizer + t.exposed_communication));
  CHECK(t.compute_bound + t.memory_bound + t.overhead_bound == Approx(t.forward + t.backward));
  CHECK(on_v100.images_per_second == Approx(32 / on_v100.iteration_seconds));
  CHECK(on_v100.images_per_second > 2 * on_k80.images_per_second);
  CHECK(on_v100.images_per_second_low < on_v100.images_per_second);
  CHECK(on_v100.images_per_second_high > on_v100.images_per_second);
  CHECK(on_v100.efficiencies_source.find("priors") != std::string::npos);
  CHECK(t.communication == 0);

  GpuConfiguration eight = one;
  eight.gpus_per_node = 8;
  const GpuPrediction node = must(predict_gpu(network, v100, priors, eight));
  CHECK(node.terms.communication > 0);
  CHECK(node.scaling_efficiency > 0.5);
  CHECK(node.scaling_efficiency < 1);
  CHECK(node.images_per_second > 4 * on_v100.images_per_second);

  GpuConfiguration too_many = one;
  too_many.gpus_per_node = 9;
  CHECK_FALSE(predict_gpu(network, v100, priors, too_many));

  // ResNet-152 at batch 128 needs far more than a K80 die's 12 GB.
  const auto resnet152 = must(workloads::load_network("resnet152"));
  GpuConfiguration large = one;
  large.batch_per_gpu = 128;
  const auto excluded = predict_gpu(resnet152, k80, priors, large);
  REQUIRE_FALSE(excluded);
  CHECK(excluded.error().message.find("needs") != std::string::npos);
  CHECK(excluded.error().message.find("k80") != std::string::npos);
}

TEST_CASE("the GPU tuner searches GPUs, batch and fusion and keeps what it excludes") {
  const auto network = must(workloads::load_network("resnet152"));
  const GpuNode k80 = must(gpu_node(must(data::builtin_machine("k80"))));
  tuner::GpuSearchOptions search;
  search.batches_per_gpu = {32, 256};
  const auto recommendation = must(tuner::recommend_gpu(network, k80, gpu_efficiency_priors(), search));
  CHECK(recommendation.space_size == 4 * 2);   // 1, 2, 4, 8 GPUs x 2 batches
  CHECK(recommendation.excluded.size() == 4);  // batch 256 fits nowhere
  CHECK(recommendation.best.configuration.gpus_per_node == 8);
  CHECK(recommendation.best.configuration.batch_per_gpu == 32);
  CHECK(tuner::default_gpu_counts(8) == std::vector<int>{1, 2, 4, 8});
  CHECK(tuner::default_gpu_counts(6) == std::vector<int>{1, 2, 4, 6});
}

TEST_CASE("a GPU calibration recovers the efficiencies its micro-runs were made with") {
  const GpuNode h200 = must(gpu_node(must(data::builtin_machine("h200"))));
  const GpuEfficiencies priors = gpu_efficiency_priors();
  // The "measured" GPU (strict fp32 records): dense convolutions, 3x3 and 1x1, at half the priors' compute efficiency,
  // streaming
  // kernels at 0.9 of HBM, 20 us of host time per op.
  GpuEfficiencies truth = priors;
  for (GpuKernelClass dense : {GpuKernelClass::convolution, GpuKernelClass::convolution_pointwise})
    for (double& efficiency : truth.classes[static_cast<int>(dense)].compute) efficiency /= 2;
  truth.classes[static_cast<int>(GpuKernelClass::elementwise)].memory = 0.9;
  truth.dispatch_seconds_per_op = 20e-6;
  // A dense 3x3 convolution's forward also takes 30 us whatever the batch.
  truth.classes[static_cast<int>(GpuKernelClass::convolution)].fixed_seconds[0] = 30e-6;
  const auto network = must(workloads::load_network("resnet50"));
  std::vector<records::Measurement> records;
  for (const workloads::DistinctLayer& layer : workloads::distinct_layers(network))
    for (std::int64_t batch : {32, 64})
      for (workloads::Pass pass : workloads::all_passes) {
        const auto cost = workloads::layer_cost(layer.spec, batch).pass(pass);
        const double seconds = gpu_pass_time(layer.spec, pass, cost, batch, h200, truth).seconds;
        if (seconds <= 0) continue;
        records::Measurement record;
        record.backend = "torch-cuda";
        record.backend_version = "libtorch test";
        record.descriptor = layer.descriptor;
        record.pass = workloads::pass_name(pass);
        record.batch = batch;
        record.median_seconds = seconds;
        records.push_back(record);
      }
  const GpuCalibration calibration = must(fit_gpu_calibration(records, h200, priors));
  const GpuEfficiencies& fitted = calibration.efficiencies;
  CHECK(fitted.classes[static_cast<int>(GpuKernelClass::convolution)].compute[0] == Approx(0.35).epsilon(0.02));
  CHECK(fitted.classes[static_cast<int>(GpuKernelClass::elementwise)].memory == Approx(0.9).epsilon(0.02));
  CHECK(fitted.classes[static_cast<int>(GpuKernelClass::convolution)].fixed_seconds[0] == Approx(30e-6).epsilon(0.02));
  CHECK(fitted.classes[static_cast<int>(GpuKernelClass::convolution)].fixed_seconds[1] == Approx(0).margin(1e-7));
  CHECK(calibration.prior_median_error > 0.2);
  CHECK(calibration.fitted_median_error < 0.02);
  CHECK(fitted.source.find("fitted on h200") != std::string::npos);
  // Written and read back, it predicts the same.
  const GpuCalibration back = must(gpu_calibration_from_json_text(to_json_text(calibration), "test"));
  CHECK(back.efficiencies.classes[0].compute == fitted.classes[0].compute);
  CHECK(back.efficiencies.dispatch_seconds_per_op == Approx(fitted.dispatch_seconds_per_op));
  CHECK(back.efficiencies.classes[0].fixed_seconds == fitted.classes[0].fixed_seconds);
  // Nothing to fit, and a file with an impossible efficiency, are errors.
  CHECK_FALSE(fit_gpu_calibration({}, h200, priors));
  std::string broken = to_json_text(calibration);
  broken.replace(broken.find("\"memory\": "), 11, "\"memory\": -");
  CHECK_FALSE(gpu_calibration_from_json_text(broken, "test"));
}

namespace {

workloads::LayerSpec dense_convolution(std::int64_t kernel, std::int64_t stride, std::int64_t groups = 1) {
  workloads::LayerSpec spec;
  spec.kind = workloads::LayerKind::convolution;
  spec.input = {64, 56, 56};
  spec.output_channels = 64;
  spec.kernel_h = spec.kernel_w = kernel;
  spec.stride_h = spec.stride_w = stride;
  spec.pad_h = spec.pad_w = kernel / 2;
  spec.groups = groups;
  return spec;
}

}  // namespace

TEST_CASE("cuDNN's convolution algorithm per precision and shape, with its arithmetic saving") {
  // Winograd F(2x2,3x3): 36 multiplications of the direct convolution per 16 (Lavin and Gray 2016).
  const ConvolutionAlgorithmChoice winograd =
      cudnn_convolution_algorithm(dense_convolution(3, 1), GpuPrecision::fp32, "volta");
  CHECK(winograd.algorithm == ConvolutionAlgorithm::winograd);
  CHECK(winograd.arithmetic_saving == Approx(36.0 / 16));
  CHECK(winograd.speedup == Approx(1.5));  // the geometric middle of no gain and the saving
  CHECK(winograd.speedup_low == 1);
  CHECK(winograd.speedup_high == Approx(2.25));
  // FFT on 32x32 tiles for 5x5: 25 multiplications per output against 4 x 32^2 / 28^2.
  const ConvolutionAlgorithmChoice fft =
      cudnn_convolution_algorithm(dense_convolution(5, 1), GpuPrecision::fp32, "pascal");
  CHECK(fft.algorithm == ConvolutionAlgorithm::fft);
  CHECK(fft.arithmetic_saving == Approx(25.0 * 28 * 28 / (4.0 * 32 * 32)));
  // A 3x3 saves more by Winograd than by the FFT (2.0).
  CHECK(fft_arithmetic_saving(3) < winograd_f2x2_3x3_arithmetic_saving);
  // Tensor cores run implicit GEMM; strided, grouped and 1x1 convolutions too.
  for (GpuPrecision precision : {GpuPrecision::tf32, GpuPrecision::bf16, GpuPrecision::fp16})
    CHECK(cudnn_convolution_algorithm(dense_convolution(3, 1), precision, "volta").algorithm ==
          ConvolutionAlgorithm::implicit_gemm);
  CHECK(cudnn_convolution_algorithm(dense_convolution(3, 2), GpuPrecision::fp32, "volta").arithmetic_saving == 1);
  CHECK(cudnn_convolution_algorithm(dense_convolution(3, 1, 64), GpuPrecision::fp32, "volta").arithmetic_saving == 1);
  CHECK(cudnn_convolution_algorithm(dense_convolution(1, 1), GpuPrecision::fp32, "volta").arithmetic_saving == 1);
  // Ampere and Hopper (the H200 measured no saving in fp32) and an unknown generation: none.
  for (const char* architecture : {"ampere", "hopper", ""})
    CHECK(cudnn_convolution_algorithm(dense_convolution(3, 1), GpuPrecision::fp32, architecture).arithmetic_saving ==
          1);

  // A compute-bound fp32 3x3 pass takes 1/1.5 of its implicit-GEMM time; its TF32 pass does not change.
  const GpuNode node = must(gpu_node(must(data::builtin_machine("v100"))));
  const auto spec = dense_convolution(3, 1);
  const workloads::PassCost cost{static_cast<std::int64_t>(1e12), 0, 1000};
  const GpuEfficiencies priors = gpu_efficiency_priors();
  const GpuPassTime fp32 = gpu_pass_time(spec, workloads::Pass::forward, cost, 64, node, priors);
  const double utilisation = fp32.utilisation;
  CHECK(fp32.algorithm.algorithm == ConvolutionAlgorithm::winograd);
  CHECK(fp32.compute_seconds == Approx(1e12 / 1.5 / (node.fp32_flops * 0.70 * utilisation)));
}

TEST_CASE("Kepler as it ran: the K80 die at its sustained clock, cuDNN's share on Kepler from published figures") {
  const GpuNode k80 = must(gpu_node(must(data::builtin_machine("k80"))));
  CHECK(k80.architecture == "kepler");
  // 2,496 CUDA cores x 2 FLOP between the 562 MHz default application clock and the 875 MHz top
  // boost step (NVIDIA's K80 board specification and autoboost post).
  CHECK(k80.fp32_flops > 2496 * 2 * 562e6);
  CHECK(k80.fp32_flops < 2496 * 2 * 875e6);
  const GenerationEfficiency kepler = cudnn_generation_efficiency("kepler");
  CHECK(kepler.low == Approx(0.54));
  CHECK(kepler.high == Approx(0.65));
  CHECK(kepler.value == Approx(0.625));
  CHECK(cudnn_generation_efficiency("volta").value == 1);
  CHECK(cudnn_generation_efficiency("").value == 1);
  // TensorFlow's published benchmarks (2017, batch 32): ResNet-152 at 20.0 images/s on one K80 die
  // and 82.7 on one P100; the model's ratio reproduces it (the value is that median network's).
  const GpuNode p100 = must(gpu_node(must(data::builtin_machine("p100"))));
  const auto network = must(workloads::build_network("resnet152"));
  GpuConfiguration configuration;
  configuration.batch_per_gpu = 32;
  const GpuEfficiencies efficiencies = gpu_efficiency_priors();
  const auto on_k80 = must(predict_gpu(network, k80, efficiencies, configuration));
  const auto on_p100 = must(predict_gpu(network, p100, efficiencies, configuration));
  CHECK(on_k80.images_per_second / on_p100.images_per_second == Approx(20.0 / 82.7).epsilon(0.05));
  bool says_so = false;
  for (const auto& line : on_k80.assumptions) says_so = says_so || line.find("cuDNN on kepler") != std::string::npos;
  CHECK(says_so);
}
