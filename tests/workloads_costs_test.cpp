// tests/workloads_costs_test.cpp — FLOPs, multiply-adds, bytes, parameters and kept
// activations per layer and pass, worked out by hand from the conventions in costs.hpp, and the
// network totals (gradient sums, deduplicated activations, all-reduce, optimizer).
#include <catch2/catch.hpp>

#include "workloads/builder.hpp"
#include "workloads/costs.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune::workloads;

namespace {

LayerCost cost_of(const std::string& descriptor, std::int64_t batch) {
  const auto spec = parse_descriptor(descriptor);
  REQUIRE(spec);
  return layer_cost(*spec, batch);
}

void check_pass(const PassCost& cost, std::int64_t flops, std::int64_t macs, std::int64_t bytes) {
  CHECK(cost.flops == flops);
  CHECK(cost.macs == macs);
  CHECK(cost.bytes == bytes);
}

}  // namespace

TEST_CASE("convolution: 2 FLOPs per multiply-add, bias adds, fp32 tensors moved once") {
  // 64x56x56 -> 64x56x56, 3x3: per image 64*56*56 outputs x 64*9 multiply-adds.
  const std::int64_t out = 2 * 64 * 56 * 56;  // batch 2
  const std::int64_t macs = out * 64 * 9;
  const std::int64_t weights = 64 * 64 * 9;
  const LayerCost cost = cost_of("conv:ic64ih56iw56oc64kh3kw3sh1ph1", 2);
  CHECK(cost.parameters == weights);
  check_pass(cost.forward, 2 * macs, macs, 4 * (out + out + weights));
  check_pass(cost.backward_data, 2 * macs, macs, 4 * (out + weights + out));
  check_pass(cost.backward_weights, 2 * macs, macs, 4 * (out + out + weights));
  CHECK(cost.saved_activation_bytes == 4 * out);  // the input, for the weight gradient

  // Grouped with bias: 6 outputs per position, each 2 input channels x 9.
  const LayerCost grouped = cost_of("conv:g2ic4ih3iw3oc6kh3kw3sh1ph1bias1", 1);
  CHECK(grouped.parameters == 6 * 2 * 9 + 6);
  check_pass(grouped.forward, 2 * 54 * 18 + 54, 54 * 18, 4 * (36 + 54 + 114));
  check_pass(grouped.backward_data, 2 * 54 * 18, 54 * 18, 4 * (54 + 108 + 36));
  check_pass(grouped.backward_weights, 2 * 54 * 18 + 54, 54 * 18, 4 * (36 + 54 + 114));
}

TEST_CASE("inner product") {
  const std::int64_t batch = 4, macs = batch * 2048 * 1000, parameters = 2048 * 1000 + 1000;
  const LayerCost cost = cost_of("linear:ic2048oc1000bias1", batch);
  CHECK(cost.parameters == parameters);
  check_pass(cost.forward, 2 * macs + batch * 1000, macs, 4 * (batch * 2048 + batch * 1000 + parameters));
  check_pass(cost.backward_data, 2 * macs, macs, 4 * (batch * 1000 + 2048 * 1000 + batch * 2048));
  check_pass(cost.backward_weights, 2 * macs + batch * 1000, macs, 4 * (batch * 2048 + batch * 1000 + parameters));
  CHECK(cost.saved_activation_bytes == 4 * batch * 2048);
}

TEST_CASE("batch norm, ReLU and ReLU6 count per element") {
  const std::int64_t elements = 2 * 2 * 3 * 3;  // batch 2 of 2x3x3
  const LayerCost bn = cost_of("bnorm:ic2ih3iw3", 2);
  CHECK(bn.parameters == 4);
  check_pass(bn.forward, 5 * elements, 0, 4 * (2 * elements + 4 * 2));
  check_pass(bn.backward_data, 6 * elements, 0, 4 * (3 * elements + 5 * 2));
  check_pass(bn.backward_weights, 5 * elements, 0, 4 * (2 * elements + 4 * 2));
  CHECK(bn.saved_activation_bytes == 4 * elements + 4 * 2 * 2);

  const LayerCost relu = cost_of("relu:ic2ih3iw3", 2);
  check_pass(relu.forward, elements, 0, 4 * 2 * elements);
  check_pass(relu.backward_data, elements, 0, 4 * 3 * elements);
  check_pass(relu.backward_weights, 0, 0, 0);
  CHECK(relu.saved_activation_bytes == 4 * elements);
  const LayerCost relu6 = cost_of("relu6:ic2ih3iw3", 2);
  check_pass(relu6.forward, 2 * elements, 0, 4 * 2 * elements);
  check_pass(relu6.backward_data, 2 * elements, 0, 4 * 3 * elements);
}

TEST_CASE("pooling counts the window elements inside the input, not the padding") {
  // 4x4 input, 3x3 windows, stride 2, padding 1: 2x2 outputs. Along each axis the two windows
  // cover rows {0,1} and {1,2,3}: 5 reads, so 25 reads per channel.
  const LayerCost max = cost_of("maxpool:ic1ih4iw4kh3kw3sh2ph1", 1);
  check_pass(max.forward, 25 - 4, 0, 4 * (16 + 4) + 8 * 4);  // + int64 indices
  check_pass(max.backward_data, 4, 0, 4 * (4 + 16) + 8 * 4);
  CHECK(max.saved_activation_bytes == 4 * 16 + 8 * 4);
  const LayerCost avg = cost_of("avgpool:ic1ih4iw4kh3kw3sh2ph1", 1);
  check_pass(avg.forward, 25, 0, 4 * (16 + 4));
  check_pass(avg.backward_data, 25 + 4, 0, 4 * (4 + 16));
  CHECK(avg.saved_activation_bytes == 0);
  // count_include_pad changes the divisor, not the work.
  check_pass(cost_of("avgpool:ic1ih4iw4kh3kw3sh2ph1exclpad1", 1).forward, 25, 0, 4 * 20);

  // Adaptive 7 -> 3 bins: [0,3), [2,5), [4,7): 9 reads per axis; global pooling reads all.
  check_pass(cost_of("adaptavgpool:ic1ih7iw7oh3ow3", 1).forward, 81, 0, 4 * (49 + 9));
  check_pass(cost_of("adaptavgpool:ic1ih7iw7oh3ow3", 1).backward_data, 81 + 9, 0, 4 * (9 + 49));
  check_pass(cost_of("adaptavgpool:ic2048ih7iw7oh1ow1", 1).forward, 2048 * 49, 0, 4 * 2048 * 50);
}

TEST_CASE("add, concat, flatten, dropout and the loss") {
  const LayerCost sum = cost_of("add:ic1ih2iw2n3", 1);
  check_pass(sum.forward, 2 * 4, 0, 4 * (3 * 4 + 4));
  check_pass(sum.backward_data, 0, 0, 0);  // the gradient is handed on unchanged
  check_pass(cost_of("concat:ic1+2ih2iw2", 1).forward, 0, 0, 4 * (12 + 12));
  check_pass(cost_of("concat:ic1+2ih2iw2", 1).backward_data, 0, 0, 0);  // slices are views
  const LayerCost flat = cost_of("flatten:ic512ih7iw7", 8);
  check_pass(flat.forward, 0, 0, 0);
  check_pass(flat.backward_data, 0, 0, 0);

  const LayerCost drop = cost_of("dropout:ic10ih1iw1p0.5", 3);
  check_pass(drop.forward, 30, 0, 4 * 60 + 30);  // + the 1-byte mask
  check_pass(drop.backward_data, 30, 0, 4 * 60 + 30);
  CHECK(drop.saved_activation_bytes == 30);

  const LayerCost loss = cost_of("softmaxloss:ic10", 3);
  check_pass(loss.forward, 4 * 30 + 2 * 3, 0, 4 * (2 * 30 + 1) + 8 * 3);
  check_pass(loss.backward_data, 30 + 3, 0, 4 * 60 + 8 * 3);
  CHECK(loss.saved_activation_bytes == 4 * 30 + 8 * 3);  // probabilities and labels
  check_pass(cost_of("input:ic3ih224iw224", 1).forward, 0, 0, 0);
}

TEST_CASE("network totals: skipped backward, gradient sums, activations kept once") {
  // image -> a (1x1 conv) -> r (ReLU) -> b (1x1 conv); add(r, b) -> flatten -> fc -> loss.
  NetworkBuilder net("tiny");
  const auto image = net.input("image", {1, 4, 4});
  const auto a = net.layer("a", conv2d(2, 1), image);
  const auto r = net.layer("r", relu(), a);
  const auto b = net.layer("b", conv2d(2, 1), r);
  const auto sum = net.layer("sum", add(), {r, b});
  const auto flat = net.layer("flat", flatten(), sum);
  const auto fc = net.layer("fc", linear(3), flat);
  net.layer("loss", softmax_cross_entropy(), fc);
  const auto network = net.finish();
  REQUIRE(network);
  CHECK_FALSE(network->layers[a].computes_data_gradient);  // the image needs no gradient
  CHECK(network->layers[a].runs_backward);
  CHECK(network->layers[r].computes_data_gradient);
  CHECK(layer_cost(network->layers[a], 1).backward_data.flops == 0);
  CHECK(layer_cost(network->layers[a], 1).backward_weights.flops == 2 * 32);

  const auto cost = network_cost(*network, 1);
  REQUIRE(cost);
  CHECK(cost->parameters == 2 + 4 + 32 * 3 + 3);
  CHECK(cost->gradient_bytes == 4 * cost->parameters);
  CHECK(cost->optimizer_update_flops == 6 * cost->parameters);
  CHECK(cost->optimizer_update_bytes == 20 * cost->parameters);
  CHECK(cost->forward.macs == 32 + 2 * 32 + 32 * 3);
  // r is read by b and by sum: its two gradients are summed, 32 adds, reading 2 writing 1.
  check_pass(cost->gradient_sums, 32, 0, 4 * 3 * 32);
  // Kept: the image (for a's weights), r (ReLU's output, also b's input: once), the flattened
  // sum (fc's input), probabilities + label.
  CHECK(cost->activation_bytes_kept == 4 * 16 + 4 * 32 + 4 * 32 + (4 * 3 + 8));
  CHECK(cost->layers == 8);
  CHECK(cost->distinct_layers == 7);
  const PassCost training = cost->training();
  CHECK(training.flops ==
        cost->forward.flops + cost->backward_data.flops + cost->backward_weights.flops + cost->gradient_sums.flops);
}

TEST_CASE("network FLOPs scale with the batch, weight traffic does not") {
  const auto network = build_network("resnet50");
  REQUIRE(network);
  const auto one = network_cost(*network, 1);
  const auto many = network_cost(*network, 32);
  REQUIRE(one);
  REQUIRE(many);
  CHECK(many->forward.flops == 32 * one->forward.flops);
  CHECK(many->training().flops == 32 * one->training().flops);
  CHECK(many->forward.macs == 32 * one->forward.macs);
  // Kept activations scale too, except batch norm's per-channel mean and inverse std.
  std::int64_t batch_norm_statistics = 0;
  for (const Layer& layer : network->layers)
    if (layer.spec.kind == LayerKind::batch_norm) batch_norm_statistics += 2 * 4 * layer.output.channels;
  CHECK(many->activation_bytes_kept ==
        32 * (one->activation_bytes_kept - batch_norm_statistics) + batch_norm_statistics);
  CHECK(many->forward.bytes < 32 * one->forward.bytes);
  CHECK(many->gradient_bytes == one->gradient_bytes);
  // Training is about 3x forward: backward-data and backward-weights each redo the MACs
  // (the first convolution skips backward-data).
  CHECK(one->backward_weights.macs == one->forward.macs);
  CHECK(one->backward_data.macs == one->forward.macs - 118013952);  // conv1: 64x112x112 x 3x49

  CHECK_FALSE(network_cost(*network, 0));
  CHECK_FALSE(network_cost(*network, max_batch + 1));
  CHECK(network_cost(*network, max_batch));
}

TEST_CASE("training memory: what ResNet-152 at batch 32 was measured to hold, and linear in the batch's part") {
  const auto network = dnntune::workloads::load_network("resnet152");
  REQUIRE(network);
  const auto b32 = dnntune::workloads::network_cost(*network, 32);
  const auto b16 = dnntune::workloads::network_cost(*network, 16);
  REQUIRE(b32);
  REQUIRE(b16);
  // Bounds around the peak resident set `dnntune train` reached (Debian's libtorch, 2 threads;
  // docs/results.md, "The first run").
  CHECK(b32->training_memory_bytes() > 6.5e9);
  CHECK(b32->training_memory_bytes() < 8.0e9);
  CHECK(b32->training_memory_bytes() > 1.7 * b16->training_memory_bytes());
}
