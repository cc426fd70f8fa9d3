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
#include "model/plausibility.hpp"
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
