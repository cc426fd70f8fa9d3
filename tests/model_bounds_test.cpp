// tests/model_bounds_test.cpp — no answer that is not finite and above 0: the one check both
// predictors end with, a GPU prediction of the smallest network that still computes, and a GPU
// calibration whose counts are not integers.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "data/builtin_machines.hpp"
#include "model/gpu_calibration.hpp"
#include "model/gpu_node.hpp"
#include "model/gpu_predictor.hpp"
#include "model/calibration.hpp"
#include "model/gpu_report.hpp"
#include "model/plausibility.hpp"
#include "model/predictor.hpp"
#include "workloads/costs.hpp"
#include "model/report.hpp"
#include "model/scaling.hpp"
#include "workloads/zoo.hpp"
#include "workloads/network_json.hpp"

using namespace dnntune;
using namespace dnntune::model;

TEST_CASE("an answer with a figure that is not finite and above 0 is a failure naming it") {
  CHECK(check_answer("resnet50", {1.0, 12.5, 1e-9, 20, 0}));
  for (const double figure : {0.0, -3.0, std::numeric_limits<double>::infinity(), std::nan("")}) {
    const auto refused = check_answer("resnet50, 1 GPU x batch 32 on h200", {1.0, 12.5, 10, figure, 0});
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == ErrorKind::failure);  // exit 1: the model's fault, not the input's
    CHECK(refused.error().message.find("resnet50, 1 GPU x batch 32 on h200 (band high ") != std::string::npos);
  }
}

TEST_CASE("a band whose low end is 0 is an unknown band, not a failure, below 0 it is a failure") {
  // A busy machine's sparse fit: one bootstrap replicate's step never ends (band low 0).
  CHECK(check_answer("tiny_residual, 2 ppn x 1 thread on vm", {0.5, 8, 0, 20, 0}));
  CHECK_FALSE(band_is_known(0, 20));
  const auto negative = check_answer("tiny_residual", {0.5, 8, -1, 20, 0});
  REQUIRE_FALSE(negative);
  CHECK(negative.error().message.find("(band low -1)") != std::string::npos);
}

TEST_CASE("a GPU prediction of the smallest network that computes is finite") {
  const auto profile = data::builtin_machine("h200");
  REQUIRE(profile);
  const auto node = gpu_node(*profile);
  REQUIRE(node);
  const auto network = workloads::network_from_json(
      nlohmann::json::parse(R"({"schema": "dnntune.network", "schema_version": 1, "name": "one_relu", "layers": [
        {"name": "input", "descriptor": "input:ic3ih16iw16", "inputs": []},
        {"name": "relu", "descriptor": "relu:ic3ih16iw16", "inputs": ["input"]}]})"),
      "one_relu.json");
  REQUIRE(network);
  GpuConfiguration configuration;
  const auto prediction = predict_gpu(*network, *node, gpu_efficiency_priors(), configuration);
  REQUIRE(prediction);
  CHECK(std::isfinite(prediction->images_per_second_high));
  CHECK(prediction->images_per_second_low > 0);
}

TEST_CASE("a GPU calibration's kernel counts are integers") {
  const std::string text = to_json_text(GpuCalibration{"h200", "libtorch 2.11.0", gpu_efficiency_priors(), {}, 0, 0});
  REQUIRE(gpu_calibration_from_json_text(text, "gpu.json"));
  nlohmann::json bad = nlohmann::json::parse(text);
  bad["efficiencies"]["classes"].begin().value()["kernels_per_pass"] = 1.5;
  const auto refused = gpu_calibration_from_json_text(bad.dump(), "gpu.json");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("gpu.json: (/efficiencies/classes/") == 0);
  CHECK(refused.error().message.find("kernels_per_pass) must be an integer") != std::string::npos);
  bad = nlohmann::json::parse(text);
  bad["fitted_median_error"] = -1;
  CHECK_FALSE(gpu_calibration_from_json_text(bad.dump(), "gpu.json"));
}

TEST_CASE("the gate: no answer faster than the roofline, none slower than the floor") {
  CHECK(check_answer("resnet50", {1.0, 12.5, 10, 14, 100}));
  const auto faster = check_answer("resnet152 on vm", {1e-6, 64e6, 60e6, 70e6, 11.8});
  REQUIRE_FALSE(faster);
  CHECK(faster.error().kind == ErrorKind::failure);
  CHECK(faster.error().message.find("faster than the machine's roofline") != std::string::npos);
  const auto slower = check_answer("resnet50 over 1024 nodes", {1.8e62, 1e-60, 1e-61, 1e-59, 0});
  REQUIRE_FALSE(slower);
  CHECK(slower.error().message.find("longer than any machine's") != std::string::npos);
  AnswerFigures held{1.0, 12.5, 10, 14, 13};
  hold_band_at_roofline(held);
  CHECK(held.band_high == 13);
}

TEST_CASE("the algorithms: only a stride-1 spatial convolution may beat its direct FLOPs") {
  const auto conv = [](std::int64_t k, std::int64_t stride) {
    workloads::LayerSpec spec;
    spec.kind = workloads::LayerKind::convolution;
    spec.kernel_h = spec.kernel_w = k;
    spec.stride_h = spec.stride_w = stride;
    return spec;
  };
  CHECK(arithmetic_saving_bound(conv(1, 1)) == 1);
  CHECK(arithmetic_saving_bound(conv(3, 2)) == 1);
  CHECK(arithmetic_saving_bound(conv(3, 1)) >= winograd_f4x4_3x3_arithmetic_saving);  // F(4x4,3x3)
  CHECK(arithmetic_saving_bound(conv(7, 1)) > arithmetic_saving_bound(conv(3, 1)));   // FFT
  workloads::LayerSpec gemm;
  gemm.kind = workloads::LayerKind::inner_product;
  CHECK(arithmetic_saving_bound(gemm) == 1);
  CHECK(gpu_class_saving_bound(GpuKernelClass::matmul) == 1);
  CHECK(gpu_class_saving_bound(GpuKernelClass::convolution) == winograd_f4x4_3x3_arithmetic_saving);
}

TEST_CASE("a measured step faster than the roofline is refused by file and field") {
  auto document = nlohmann::json::parse(data::builtin_reference_calibration("torch"));
  REQUIRE(calibration_from_json_text(document.dump(), "calibration.json"));
  // A 2-core VM: resnet152 at batch 32 needs seconds a step at its peak, not a microsecond.
  document["allocation"] = {{"fault_ns_per_page", 300},
                            {"fault_ns_per_page_all_cores", 400},
                            {"variants", nlohmann::json::array()},
                            {"pytorch_setups",
                             {{{"network", "resnet152"},
                               {"batch", 32},
                               {"processes_per_node", 1},
                               {"threads_per_process", 2},
                               {"smt", false},
                               {"allocator", "tcmalloc"},
                               {"iteration_seconds", {1e-6}}}}}};
  const auto refused = calibration_from_json_text(document.dump(), "calibration.json");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == ErrorKind::bad_input);
  CHECK(refused.error().message.find("calibration.json: (/allocation/pytorch_setups/0/iteration_seconds)") == 0);
  CHECK(refused.error().message.find("faster than the roofline") != std::string::npos);
  document["allocation"]["pytorch_setups"][0]["iteration_seconds"] = {30.0};
  CHECK(calibration_from_json_text(document.dump(), "calibration.json"));
}

TEST_CASE("a peak, bandwidth or NUMA list no real machine has is refused by name") {
  const auto profile = nlohmann::json::parse(records::to_json_text(*data::builtin_machine("skylake-8180")));
  for (const char* member : {"peak_fp32_gflops_per_core", "memory_bandwidth_gbs_per_package"}) {
    auto bad = profile;
    bad["performance"][member]["value"] = 1e-300;
    const auto refused = records::machine_profile_from_json_text(bad.dump(), "node.json");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find(std::string("node.json: (/performance/") + member +
                                       "/value) 1e-300 is outside") == 0);
  }
  auto no_numa = profile;
  no_numa["topology"]["numa_list"] = nlohmann::json::array();
  const auto refused = records::machine_profile_from_json_text(no_numa.dump(), "node.json");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("node.json: (/topology/numa_list) lists 0 NUMA nodes beside numa_nodes 2") == 0);
}

TEST_CASE("a GPU efficiency above its algorithm's reach, or no class at all, is refused") {
  const std::string reference = data::builtin_reference_calibration("torch-cuda");
  REQUIRE(gpu_calibration_from_json_text(reference, "gpu.json"));
  auto bad = nlohmann::json::parse(reference);
  bad["efficiencies"]["classes"]["matmul"]["compute_by_precision"]["bf16"] = {2.0, 0.45, 0.4};
  auto refused = gpu_calibration_from_json_text(bad.dump(), "gpu.json");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find(
            "gpu.json: (/efficiencies/classes/matmul/compute_by_precision/bf16) 2 is outside (0, 1]") == 0);
  bad = nlohmann::json::parse(reference);
  bad["efficiencies"]["classes"]["convolution"]["compute"] = {1.5, 1.3, 1.1};  // Winograd can: accepted
  CHECK(gpu_calibration_from_json_text(bad.dump(), "gpu.json"));
  bad["efficiencies"]["classes"] = nlohmann::json::object();
  refused = gpu_calibration_from_json_text(bad.dump(), "gpu.json");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("gpu.json: (/efficiencies/classes) holds no kernel class") == 0);
}

TEST_CASE("a band wider than the widest ratio is unknown, in text and JSON") {
  CHECK(band_is_known(1014.0, 2226.5));
  CHECK_FALSE(band_is_known(0.2, 77674320.3));
  CHECK(images_per_second_text(1502.6, 1014.0, 2226.5, "measured") == "1502.6  (90% band 1014.0 - 2226.5, measured)");
  const std::string text = images_per_second_text(3662.1, 0.2, 77674320.3, "measured");
  CHECK(text.find("unknown") == 0);
  CHECK(text.find("3662.1") == std::string::npos);
  nlohmann::json out;
  put_images_per_second(out, 3662.1, 0.2, 77674320.3);
  CHECK(out["images_per_second"].is_null());
  CHECK(out["band"]["known"] == false);
}

TEST_CASE("scale's rows say unknown where a band is wider than the widest ratio, in text and JSON") {
  std::vector<ScalingRow> rows(2);
  for (ScalingRow& row : rows) {
    row.prediction.network = "resnet50";
    row.prediction.machine = "skylake-8180";
    row.prediction.backend = "torch";
  }
  rows[0].prediction.images_per_second = 1502.6;
  rows[0].prediction.images_per_second_low = 1014.0;
  rows[0].prediction.images_per_second_high = 2226.5;
  rows[1].nodes = 2;
  rows[1].prediction.configuration.nodes = 2;
  rows[1].prediction.images_per_second = 3662.1;
  rows[1].prediction.images_per_second_low = 0.2;
  rows[1].prediction.images_per_second_high = 77674320.3;
  const std::string text = scaling_text(rows);
  CHECK(text.find(" 1500 ") != std::string::npos);  // the known row's figure
  CHECK(text.find("3660") == std::string::npos);
  CHECK(text.find(" unknown ") != std::string::npos);
  CHECK(text.find("unknown: a 90% band wider than 100x") != std::string::npos);
  const auto json = scaling_json(rows);
  CHECK(json[0]["band"]["known"] == true);
  CHECK(json[1]["images_per_second"].is_null());
  CHECK(json[1]["band"]["known"] == false);
  rows.pop_back();
  CHECK(scaling_text(rows).find("unknown") == std::string::npos);  // said only where a row is unknown

  // A GPU node's rows alike.
  std::vector<GpuScalingRow> gpu_rows(2);
  for (std::size_t index = 0; index < gpu_rows.size(); ++index) {
    GpuPrediction& prediction = gpu_rows[index].prediction;
    prediction.network = "resnet50";
    prediction.machine = "h200";
    prediction.images_per_second = index == 0 ? 1502.6 : 3662.1;
    prediction.images_per_second_low = index == 0 ? 1014.0 : 0.2;
    prediction.images_per_second_high = index == 0 ? 2226.5 : 77674320.3;
  }
  gpu_rows[1].nodes = 2;
  const std::string gpu_text = gpu_scaling_text(gpu_rows);
  CHECK(gpu_text.find("1500 (") != std::string::npos);
  CHECK(gpu_text.find("3660") == std::string::npos);
  CHECK(gpu_text.find("unknown (0.200 - ") != std::string::npos);
  CHECK(gpu_text.find("unknown: a 90% band wider than 100x") != std::string::npos);
  CHECK(gpu_scaling_json(gpu_rows)[1]["prediction"]["images_per_second"].is_null());
}

TEST_CASE("a GPU answer says how much of its layer time this GPU's micro-runs timed") {
  const auto node = gpu_node(*data::builtin_machine("h200"));
  REQUIRE(node);
  const auto efficiencies = reference_gpu_efficiencies(data::builtin_reference_calibration("torch-cuda"));
  REQUIRE(efficiencies);
  GpuConfiguration configuration;
  configuration.precision = GpuPrecision::tf32;
  configuration.batch_per_gpu = 128;
  // None of inception_v3's shapes is among the reference's passes (resnet50 and resnet152 only).
  const auto inception = predict_gpu(*workloads::load_network("inception_v3"), *node, *efficiencies, configuration);
  REQUIRE(inception);
  CHECK(inception->measured_fraction == 0);
  CHECK(inception->confidence == "calibrated");
  CHECK(inception->confidence_reason.find("0% of its layer time from micro-runs") != std::string::npos);
  configuration.batch_per_gpu = 64;
  const auto resnet50 = predict_gpu(*workloads::load_network("resnet50"), *node, *efficiencies, configuration);
  REQUIRE(resnet50);
  CHECK(resnet50->measured_fraction > 0.9);
  CHECK(resnet50->confidence == "partly measured");  // no whole GPU step anchors it: never "measured"
  CHECK(gpu_prediction_json(*resnet50).at("measured_fraction") == Approx(resnet50->measured_fraction));
}

TEST_CASE("no band reaches past what the link carries: each node's port moves 2(N-1)/N of the gradients") {
  const auto reference = calibration_from_json_text(data::builtin_reference_calibration("torch"), "torch.json");
  REQUIRE(reference);
  const auto predictor = Predictor::from_spec(*data::builtin_machine("broadwell-e5-2680v4"), *reference);
  REQUIRE(predictor);
  const auto network = workloads::load_network("vgg16");
  REQUIRE(network);
  TrainingConfiguration configuration;
  configuration.processes_per_node = 1;
  configuration.threads_per_process = 28;
  configuration.batch_per_process = 32;
  configuration.nodes = 64;
  configuration.fabric = *fabric_from_numbers(1, 50);
  const auto prediction = predictor->predict(*network, configuration);
  REQUIRE(prediction);
  const double gradient_bytes = static_cast<double>(workloads::network_cost(*network, 32)->gradient_bytes);
  const double link_seconds =
      2.0 * 63 / 64 * gradient_bytes / (fabric_preset(configuration.fabric)->bandwidth_gbs * 1e9);
  CHECK(prediction->images_per_second_high <= 32 * 64 / link_seconds * (1 + 1e-9));
  CHECK(prediction->images_per_second <= prediction->images_per_second_high);
}
