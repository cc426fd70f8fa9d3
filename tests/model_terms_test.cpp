// tests/model_terms_test.cpp — each cost-model term on hand-computed cases: USL, the smooth
// max, bandwidth sharing between co-running processes, SMT, overhead, bandwidth curves,
// communication, placement.
#include <catch2/catch.hpp>

#include <cmath>

#include "data/builtin_machines.hpp"
#include "model/communication.hpp"
#include "model/layer_class.hpp"
#include "model/layer_time.hpp"
#include "model/training_configuration.hpp"
#include "workloads/layer.hpp"

using namespace dnntune;
using namespace dnntune::model;

namespace {

// A 1-package, 4-core machine: 100 GFLOP/s per core; one core streams 10 GB/s, the package
// saturates at 20 GB/s from 2 cores on.
MachineRates four_core_machine() {
  MachineRates rates;
  rates.peak_gflops_per_core = 100;
  rates.packages = 1;
  rates.cores_per_package = 4;
  rates.pus_per_core = 2;
  rates.package_bandwidth_curve = {{1, 10}, {2, 20}, {4, 20}};
  return rates;
}

ModelParameters simple_parameters() {
  ModelParameters parameters;
  for (auto& of_class : parameters.classes) {
    for (double& efficiency : of_class.efficiency) efficiency = 0.5;
    for (double& overhead : of_class.overhead_seconds) overhead = 0;
    of_class.contention = 0;
    of_class.coherency = 0;
    of_class.smt_gain = 0.2;
    of_class.corun_slowdown = 0;
  }
  parameters.bandwidth_efficiency = 1;
  parameters.smooth_max_exponent = 1;  // g = 1: compute and memory simply add
  return parameters;
}

}  // namespace

TEST_CASE("libtorch's convolution dispatch decides the class") {
  // ConvParams::use_mkldnn of libtorch 1.13, case by case.
  const auto class_of = [](const std::string& descriptor, const std::string& backend, std::int64_t batch, int threads) {
    return classify(*workloads::parse_descriptor(descriptor), backend, batch, threads);
  };
  const std::string pointwise = "conv:ic256ih56iw56oc64kh1kw1sh1ph0";
  CHECK(class_of(pointwise, "torch", 8, 1) == LayerClass::conv_native);
  CHECK(class_of(pointwise, "torch", 16, 1) == LayerClass::conv_pointwise);  // batch >= 16
  CHECK(class_of(pointwise, "torch", 8, 2) == LayerClass::conv_pointwise);   // more than one thread
  CHECK(class_of(pointwise, "onednn", 8, 1) == LayerClass::conv_pointwise);  // no such rule
  CHECK(class_of("conv:ic256ih56iw56oc512kh1kw1sh2ph0", "torch", 8, 1) == LayerClass::conv_pointwise);  // strided
  CHECK(class_of("conv:ic64ih56iw56oc64kh3kw3sh1ph1", "torch", 8, 1) == LayerClass::conv_spatial);
  // At batch 1 a small input (8 x 8 x 8 = 512 elements) with a kernel up to 3x3 stays native even
  // on several threads; a kernel wider than 3x3 goes to oneDNN.
  CHECK(class_of("conv:ic8ih8iw8oc8kh3kw3sh1ph1", "torch", 1, 4) == LayerClass::conv_native);
  CHECK(class_of("conv:ic8ih8iw8oc8kh5kw5sh1ph2", "torch", 1, 4) == LayerClass::conv_spatial);
  CHECK(class_of("conv:ic64ih56iw56oc64kh3kw3sh1ph1", "torch", 1, 4) == LayerClass::conv_spatial);  // 200704 elements
  CHECK(class_of("conv:ic32ih56iw56oc32kh3kw3sh1ph1g32", "torch", 8, 2) == LayerClass::conv_grouped);
}

TEST_CASE("each pooling is a kernel of its own class") {
  const auto class_of = [](const std::string& descriptor) {
    return classify(*workloads::parse_descriptor(descriptor), "onednn", 16, 2);
  };
  CHECK(class_of("maxpool:ic64ih112iw112kh3kw3sh2ph1") == LayerClass::pooling_max);
  CHECK(class_of("avgpool:ic192ih35iw35kh3kw3sh1ph1") == LayerClass::pooling_average);
  CHECK(class_of("adaptavgpool:ic2048ih7iw7oh1ow1") == LayerClass::pooling_adaptive);
}

TEST_CASE("universal scalability law") {
  CHECK(usl_speedup(1, 0.3, 0.01) == Approx(1));
  CHECK(usl_speedup(4, 0, 0) == Approx(4));
  CHECK(usl_speedup(4, 0.1, 0) == Approx(4 / 1.3));      // 4 / (1 + 0.1*3)
  CHECK(usl_speedup(4, 0.1, 0.01) == Approx(4 / 1.42));  // + 0.01*4*3
}

TEST_CASE("bandwidth curve interpolates and saturates") {
  const auto rates = four_core_machine();
  CHECK(rates.package_bandwidth_gbs(0) == 0);
  CHECK(rates.package_bandwidth_gbs(0.5) == Approx(5));
  CHECK(rates.package_bandwidth_gbs(1.5) == Approx(15));
  CHECK(rates.package_bandwidth_gbs(3) == Approx(20));
  CHECK(rates.package_bandwidth_gbs(64) == Approx(20));
}

TEST_CASE("layer time: compute, memory, smooth max, overhead") {
  const auto rates = four_core_machine();
  auto parameters = simple_parameters();
  // 1e9 FLOPs at 0.5 x 100 GFLOP/s = 20 ms; 1e8 bytes at 10 GB/s = 10 ms.
  const LayerWork work{LayerClass::conv_spatial, 0, 1e9, 1e8};
  LayerTime time = layer_time(work, {1, false, 1, 1}, parameters, rates);
  CHECK(time.compute_seconds == Approx(0.020));
  CHECK(time.memory_seconds == Approx(0.010));
  CHECK(time.total_seconds == Approx(0.030));  // g = 1
  parameters.smooth_max_exponent = 10;         // close to max(Tc, Tm)
  CHECK(layer_time(work, {1, false, 1, 1}, parameters, rates).total_seconds == Approx(0.020).epsilon(0.01));
  parameters.smooth_max_exponent = 2;
  CHECK(layer_time(work, {1, false, 1, 1}, parameters, rates).total_seconds == Approx(std::sqrt(0.0005)));
  parameters.smooth_max_exponent = 1;
  parameters.of(LayerClass::conv_spatial).overhead_seconds[0] = 0.001;
  CHECK(layer_time(work, {1, false, 1, 1}, parameters, rates).total_seconds == Approx(0.031));
}

TEST_CASE("processes stream from the NUMA nodes their cores are in") {
  // The 4-core package of a spec curve as 2 NUMA nodes of 2 cores: each node saturates at
  // 10 GB/s (half of the package's 20), reached with 1 core (the package's curve at 2, halved).
  auto rates = four_core_machine();
  rates.numa_nodes_per_package = 2;
  CHECK(rates.cores_per_numa_node() == 2);
  CHECK(rates.numa_node_bandwidth_gbs(0.5) == Approx(5));
  CHECK(rates.numa_node_bandwidth_gbs(1) == Approx(10));
  CHECK(rates.numa_node_bandwidth_gbs(2) == Approx(10));
  const auto parameters = simple_parameters();
  const LayerWork work{LayerClass::batch_norm, 1, 0, 1e8};
  // 2 threads on cores 0-1, NUMA node 0 only: 10 GB/s (20 GB/s if the package were one node).
  CHECK(layer_time(work, {2, false, 1, 1}, parameters, rates).memory_seconds == Approx(0.010));
  CHECK(layer_time(work, {2, false, 1, 1}, parameters, four_core_machine()).memory_seconds == Approx(0.005));
  // 4 threads cover both nodes: the package's 20 GB/s, as without NUMA nodes.
  CHECK(layer_time(work, {4, false, 1, 1}, parameters, rates).memory_seconds == Approx(0.005));
  // 3 single-core processes on cores 0-2 cover both nodes (1.5 cores each): 20 GB/s over 3.
  CHECK(layer_time(work, {1, false, 3, 1}, parameters, rates).memory_seconds == Approx(0.015));
  // A measured curve was streamed on consecutive cores already: it is used as it is.
  rates.bandwidth_measured = true;
  CHECK(layer_time(work, {2, false, 1, 1}, parameters, rates).memory_seconds == Approx(0.005));
}

TEST_CASE("NUMA nodes per package from a profile") {
  const auto epyc = data::builtin_machine("epyc-7551");  // 4 dies per socket, a NUMA node each
  const auto skylake = data::builtin_machine("skylake-8180");
  REQUIRE(epyc);
  REQUIRE(skylake);
  CHECK(machine_rates(*epyc)->numa_nodes_per_package == 4);
  CHECK(machine_rates(*epyc)->cores_per_numa_node() == 8);
  CHECK(machine_rates(*skylake)->numa_nodes_per_package == 1);
}

TEST_CASE("threads, SMT and co-running processes") {
  const auto rates = four_core_machine();
  const auto parameters = simple_parameters();
  const LayerWork work{LayerClass::batch_norm, 1, 1e9, 1e8};
  // 2 threads on 2 cores: compute halves (10 ms), bandwidth doubles (5 ms).
  LayerTime two = layer_time(work, {2, false, 1, 1}, parameters, rates);
  CHECK(two.compute_seconds == Approx(0.010));
  CHECK(two.memory_seconds == Approx(0.005));
  // 2 threads on 1 core's SMT siblings: compute x 1/(1 + 0.2), one core's bandwidth.
  LayerTime smt = layer_time(work, {2, true, 1, 1}, parameters, rates);
  CHECK(cores_used({2, true, 1, 1}, 2) == 1);
  CHECK(smt.compute_seconds == Approx(0.020 / 1.2));
  CHECK(smt.memory_seconds == Approx(0.010));
  // 2 co-running single-thread processes: compute as alone, they share 20 GB/s: 10 GB/s each.
  LayerTime corun2 = layer_time(work, {1, false, 2, 1}, parameters, rates);
  CHECK(corun2.compute_seconds == Approx(0.020));
  CHECK(corun2.memory_seconds == Approx(0.010));
  // 4 co-running: 20 GB/s shared by 4 -> 5 GB/s each: 20 ms.
  CHECK(layer_time(work, {1, false, 4, 1}, parameters, rates).memory_seconds == Approx(0.020));
  // Shared-cache slow-down of compute per extra co-running process.
  auto slowed = parameters;
  slowed.of(LayerClass::batch_norm).corun_slowdown = 0.5;
  CHECK(layer_time(work, {1, false, 3, 1}, slowed, rates).compute_seconds == Approx(0.040));  // x (1 + 0.5*2)
}

TEST_CASE("the node terms, each alone and in a layer's time, at their priors they cost nothing") {
  // Work items: 10 rows x ceil(32 / 16) chunks = 20, dealt to 8 threads in whole shares of 3.
  LayerWork work{LayerClass::conv_spatial, 0, 1e9, 1e8};
  work.split_rows = 10;
  work.split_channels = 32;
  CHECK(work_imbalance(work, 8, 16) == Approx(24.0 / 20));
  CHECK(work_imbalance(work, 5, 16) == Approx(1.0));  // 20 items, 4 each
  CHECK(work_imbalance(work, 8, 64) == Approx(1.6));  // 10 items of 32 channels: 2 rounds of 8, 16 shares
  CHECK(work_imbalance(work, 1, 16) == 1);
  CHECK(work_imbalance(work, 8, 0) == 1);  // the prior: no work items
  // ResNet's last stage at batch 64 over 56 threads, as a spec answer splits it: 448 rows x 16 chunks.
  LayerWork last_stage{LayerClass::conv_spatial, 0, 1e9, 1e8, 64 * 7, 512};
  CHECK(work_imbalance(last_stage, 56, 32) == Approx(1.0));
  CHECK(work_imbalance(last_stage, 48, 32) == Approx(150.0 * 48 / 7168));

  // Across packages: (k-1)/k of the bytes are remote, the link carries r of local bandwidth.
  CHECK(cross_package_bandwidth_factor(1, 0.45) == 1);
  CHECK(cross_package_bandwidth_factor(2, 0.45) == Approx(0.9));
  CHECK(cross_package_bandwidth_factor(4, 0.45) == Approx(0.6));
  CHECK(cross_package_bandwidth_factor(2, 1.0) == 1);  // the prior: remote as fast as local

  // A barrier tree as deep as log2 of the threads.
  CHECK(fork_join_seconds(1, 5e-7) == 0);
  CHECK(fork_join_seconds(16, 5e-7) == Approx(2e-6));

  // In a layer's time, on two 4-core packages, one process of 8 threads spanning both.
  auto rates = four_core_machine();
  rates.packages = 2;
  auto parameters = simple_parameters();
  const ModelParameters priors;
  parameters.fork_join_seconds_per_doubling = priors.fork_join_seconds_per_doubling;
  parameters.cross_package_bandwidth_ratio = priors.cross_package_bandwidth_ratio;
  parameters.work_item_channels = priors.work_item_channels;
  const LayerTime neutral = layer_time(work, {8, false, 1, 2}, parameters, rates);
  CHECK(neutral.compute_seconds == Approx(0.0025));  // 1e9 / (8 x 50 GFLOP/s)
  CHECK(neutral.memory_seconds == Approx(0.0025));   // 1e8 / (2 x 20 GB/s)
  CHECK(neutral.overhead_seconds == 0);
  parameters.fork_join_seconds_per_doubling = 5e-7;
  parameters.cross_package_bandwidth_ratio = 0.45;
  parameters.work_item_channels = 16;
  const LayerTime spec = layer_time(work, {8, false, 1, 2}, parameters, rates);
  CHECK(spec.compute_seconds == Approx(0.0025 * 1.2));
  CHECK(spec.memory_seconds == Approx(0.0025 / 0.9));
  CHECK(spec.overhead_seconds == Approx(1.5e-6));
  CHECK(spec.total_seconds == Approx(0.0025 * 1.2 + 0.0025 / 0.9 + 1.5e-6));
}

TEST_CASE("ring all-reduce and parameter server") {
  CommunicationLinks links;
  links.intra_node = {1e-6, 10, true, "test"};
  links.inter_node = {2e-6, 5, true, "test"};
  const double bytes = 1e8;
  // 2 ranks in a node: 2 steps of latency + 2(1)/2 * 1e8 / 10e9 = 10 ms.
  CHECK(allreduce_seconds(bytes, 2, 1, links) == Approx(2e-6 + 0.010));
  // 4 nodes x 1 rank: 6 steps + 2*3/4 * 1e8 / 5e9 = 30 ms.
  CHECK(allreduce_seconds(bytes, 1, 4, links) == Approx(6 * 2e-6 + 0.030));
  CHECK(allreduce_seconds(bytes, 1, 1, links) == 0);
  // PS in one node: 3 workers, 1 server: the server link carries 2 * 3 * 1e8 = 6e8 bytes.
  CHECK(parameter_server_seconds(bytes, 3, 1, 1, links) == Approx(2 * 3 * 1e-6 + 0.060));
  CHECK_FALSE(fabric_preset("token-ring"));
  CHECK(fabric_preset("edr")->bandwidth_gbs == Approx(100.0 / 8 * 0.9));
}

TEST_CASE("fitting a link to all-reduce records") {
  std::vector<records::Measurement> records;
  for (double bytes : {1e3, 1e5, 1e7, 1e8}) {
    records::Measurement record;
    record.kind = records::MeasurementKind::communication;
    record.descriptor = "allreduce";
    record.processes = 2;
    record.message_bytes = static_cast<std::int64_t>(bytes);
    record.median_seconds = 2 * 3e-6 + bytes / 8e9;  // alpha 3 us, beta 8 GB/s, 2 ranks
    records.push_back(record);
  }
  const auto link = fit_allreduce_link(records, false);
  REQUIRE(link);
  CHECK(link->latency_seconds == Approx(3e-6).epsilon(1e-3));
  CHECK(link->bandwidth_gbs == Approx(8).epsilon(1e-3));
  CHECK_FALSE(fit_allreduce_link(records, true));  // no inter-node records
}

TEST_CASE("placement and configurations that do not fit") {
  MachineRates rates;
  rates.packages = 2;
  rates.cores_per_package = 28;
  rates.pus_per_core = 2;
  TrainingConfiguration configuration;
  configuration.processes_per_node = 4;
  configuration.threads_per_process = 14;
  auto placement = place(configuration, rates);
  REQUIRE(placement);
  CHECK(placement->processes_per_package == 2);
  CHECK(placement->packages_spanned == 1);
  configuration.processes_per_node = 1;
  configuration.threads_per_process = 56;
  placement = place(configuration, rates);
  REQUIRE(placement);
  CHECK(placement->packages_spanned == 2);
  configuration.threads_per_process = 57;
  CHECK_FALSE(place(configuration, rates));
  configuration.smt = true;  // 57 threads on 29 cores' siblings fits
  CHECK(place(configuration, rates));
  configuration.threads_per_process = 113;
  const auto too_many = place(configuration, rates);
  REQUIRE_FALSE(too_many);
  CHECK(too_many.error().message.find("the node has 56") != std::string::npos);
  configuration = TrainingConfiguration{};
  configuration.scheme = CommunicationScheme::parameter_server;
  configuration.processes_per_node = 2;
  configuration.parameter_servers = 2;
  CHECK_FALSE(place(configuration, rates));
}

TEST_CASE("an inter-node link fitted from one rank per node and a fabric given as numbers") {
  std::vector<records::Measurement> records;
  for (double bytes : {1e3, 1e5, 1e6, 1e7}) {
    records::Measurement record;
    record.kind = records::MeasurementKind::communication;
    record.descriptor = "allreduce";
    record.processes = record.nodes = 3;
    record.message_bytes = static_cast<std::int64_t>(bytes);
    record.median_seconds = 4 * 50e-6 + 4.0 / 3 * bytes / 0.025e9;  // 3 nodes: alpha 50 us, 200 Mb/s
    records.push_back(record);
    // The whole job of 2 ranks per node also crosses shared memory: it must not bend the link.
    record.processes = 6;
    record.median_seconds *= 3;
    records.push_back(record);
  }
  const auto link = fit_allreduce_link(records, true);
  REQUIRE(link);
  CHECK(link->latency_seconds == Approx(50e-6).epsilon(1e-3));
  CHECK(link->bandwidth_gbs == Approx(0.025).epsilon(1e-3));

  const auto name = fabric_from_numbers(2, 50);
  REQUIRE(name);
  CHECK(*name == "2gbps-50us");
  CHECK(is_fabric_from_numbers(*name));
  CHECK_FALSE(is_fabric_from_numbers("edr"));
  const auto given = fabric_preset(*name);
  REQUIRE(given);
  CHECK(given->bandwidth_gbs == Approx(2.0 / 8 * 0.9));
  CHECK(given->latency_seconds == Approx(50e-6));
  CHECK_FALSE(fabric_from_numbers(0, 1));
  // Outside what network ports span (1 Gb/s Ethernet to 1600 Gb/s): 1e-300 made a step of 1.8e62 s.
  for (const double gbits : {1e-300, 0.99, 1600.5, 1e6}) CHECK_FALSE(fabric_from_numbers(gbits, 1));
  CHECK(fabric_from_numbers(1, 1));
  CHECK(fabric_from_numbers(1600, 1));
  CHECK_FALSE(fabric_from_numbers(-1, 1));
  CHECK_FALSE(fabric_from_numbers(std::nan(""), 1));
  CHECK_FALSE(fabric_from_numbers(1, -1));
  CHECK_FALSE(fabric_from_numbers(1, INFINITY));
  CHECK_FALSE(fabric_preset("0gbps-1us"));
}
