// tests/model_gpu_precision_test.cpp — precision as a dimension of the GPU model: which GPUs have
// which math, memory per precision, what the script must set, the tuner's strict and mixed answers,
// what a prediction's band rests on, and the fit of the measured H200 (../shared, when present).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "data/builtin_machines.hpp"
#include "tests/expected_support.hpp"
#include "model/gpu_calibration.hpp"
#include "model/gpu_predictor.hpp"
#include "model/gpu_precision.hpp"
#include "tuner/gpu_recommendation.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune;
using dnntune::test::must;
using namespace dnntune::model;

namespace {

GpuNode spec_gpu(const std::string& name) { return must(gpu_node(must(data::load_machine(name)))); }

GpuConfiguration at(std::int64_t batch, GpuPrecision precision,
                    GpuMemoryFormat memory_format = GpuMemoryFormat::contiguous) {
  GpuConfiguration configuration;
  configuration.batch_per_gpu = batch;
  configuration.precision = precision;
  configuration.memory_format = memory_format;
  return configuration;
}

bool mentions(const std::vector<std::string>& lines, const std::string& word) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& line) { return line.find(word) != std::string::npos; });
}

}  // namespace

TEST_CASE("a V100 has no TF32 or bf16, K80 and P100 have no tensor cores") {
  const auto network = must(workloads::load_network("resnet50"));
  const GpuEfficiencies priors = gpu_efficiency_priors();
  const GpuNode v100 = spec_gpu("v100");
  for (GpuPrecision precision : {GpuPrecision::tf32, GpuPrecision::bf16}) {
    const auto refused = predict_gpu(network, v100, priors, at(64, precision));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == ErrorKind::bad_input);
    CHECK(refused.error().message.find("v100") != std::string::npos);
  }
  CHECK(predict_gpu(network, v100, priors, at(64, GpuPrecision::fp16)));
  CHECK(default_gpu_precision(v100) == GpuPrecision::fp32);
  CHECK_FALSE(check_gpu_precision(spec_gpu("k80"), GpuPrecision::fp16));
  CHECK_FALSE(check_gpu_precision(spec_gpu("p100"), GpuPrecision::tf32));
  for (const char* name : {"a100", "h100", "h200"}) {
    const GpuNode node = spec_gpu(name);
    CHECK(default_gpu_precision(node) == GpuPrecision::tf32);
    for (int precision = 0; precision < gpu_precision_count; ++precision)
      CHECK(check_gpu_precision(node, static_cast<GpuPrecision>(precision)));
  }
  // The default configuration names the precision it ran in.
  GpuConfiguration unset;
  unset.batch_per_gpu = 64;
  CHECK(must(predict_gpu(network, spec_gpu("h200"), priors, unset)).configuration.precision == GpuPrecision::tf32);
  CHECK(must(predict_gpu(network, v100, priors, unset)).configuration.precision == GpuPrecision::fp32);
}

TEST_CASE("memory per precision: autocast halves the activations, not the fp32 weights and state") {
  const auto network = must(workloads::load_network("resnet50"));
  const auto cost = must(workloads::network_cost(network, 128));
  GpuEfficiencies priors = gpu_efficiency_priors();
  priors.framework_memory_bytes = 0;
  const double tf32 = gpu_training_memory_bytes(cost, priors, GpuPrecision::tf32);
  const double bf16 = gpu_training_memory_bytes(cost, priors, GpuPrecision::bf16);
  CHECK(gpu_training_memory_bytes(cost, priors, GpuPrecision::fp32) == Approx(tf32));
  CHECK(gpu_training_memory_bytes(cost, priors, GpuPrecision::fp16) == Approx(bf16));
  const double activations = 1.1 * static_cast<double>(cost.activation_bytes_kept);
  const double half_weights = 1.1 * 2.0 * static_cast<double>(cost.parameters);
  CHECK(tf32 - bf16 == Approx(activations / 2 - half_weights));
  // PyTorch on the H200: 27.2 GiB allocated at b256 by default, 11.0 GiB in bf16 (pytorch_resnet50.tsv):
  // the activations dominate, so autocast needs well under 60%.
  CHECK(bf16 < 0.6 * tf32);
  // A batch that does not fit a 16 GB V100 in fp32 fits in fp16.
  const GpuNode v100 = spec_gpu("v100");
  const auto fp32 = predict_gpu(network, v100, gpu_efficiency_priors(), at(256, GpuPrecision::fp32));
  REQUIRE_FALSE(fp32);
  CHECK(fp32.error().message.find("fp32") != std::string::npos);
  CHECK(predict_gpu(network, v100, gpu_efficiency_priors(), at(256, GpuPrecision::fp16)));
}

TEST_CASE("what the training script sets: fp16 needs a GradScaler, bf16 does not") {
  CHECK(mentions(gpu_script_settings(GpuPrecision::fp16, GpuMemoryFormat::contiguous), "GradScaler"));
  CHECK(mentions(gpu_script_settings(GpuPrecision::fp16, GpuMemoryFormat::contiguous), "float16"));
  CHECK_FALSE(mentions(gpu_script_settings(GpuPrecision::bf16, GpuMemoryFormat::contiguous), "GradScaler()"));
  CHECK(mentions(gpu_script_settings(GpuPrecision::bf16, GpuMemoryFormat::channels_last), "bfloat16"));
  CHECK(mentions(gpu_script_settings(GpuPrecision::bf16, GpuMemoryFormat::channels_last), "channels_last"));
  CHECK(mentions(gpu_script_settings(GpuPrecision::fp32, GpuMemoryFormat::contiguous), "allow_tf32 = False"));
  CHECK(mentions(gpu_script_settings(GpuPrecision::tf32, GpuMemoryFormat::contiguous), "allow_tf32 = True"));
}

TEST_CASE("mixed precision is faster on tensor cores, channels_last spares autocast's transposes") {
  const auto network = must(workloads::load_network("resnet50"));
  const GpuNode h200 = spec_gpu("h200");
  const GpuEfficiencies priors = gpu_efficiency_priors();
  const double fp32 = must(predict_gpu(network, h200, priors, at(256, GpuPrecision::fp32))).images_per_second;
  const double tf32 = must(predict_gpu(network, h200, priors, at(256, GpuPrecision::tf32))).images_per_second;
  const double bf16 = must(predict_gpu(network, h200, priors, at(256, GpuPrecision::bf16))).images_per_second;
  const double bf16_cl =
      must(predict_gpu(network, h200, priors, at(256, GpuPrecision::bf16, GpuMemoryFormat::channels_last)))
          .images_per_second;
  CHECK(tf32 > fp32);
  CHECK(bf16 > tf32);
  CHECK(bf16_cl > bf16);
}

TEST_CASE("recommend on an H200 searches precision and memory format, strict beside mixed") {
  const auto network = must(workloads::load_network("resnet50"));
  tuner::GpuSearchOptions search;
  search.gpus_per_node = {1};
  const auto recommendation = must(tuner::recommend_gpu(network, spec_gpu("h200"), gpu_efficiency_priors(), search));
  REQUIRE(recommendation.best_strict);
  REQUIRE(recommendation.best_mixed);
  CHECK_FALSE(is_mixed_precision(*recommendation.best_strict->configuration.precision));
  CHECK(is_mixed_precision(*recommendation.best_mixed->configuration.precision));
  CHECK(recommendation.space_size == 6 * 3);  // fp32, tf32, bf16 and fp16 x both formats; 3 batches
  const std::string text = tuner::gpu_recommendation_text(recommendation, false);
  CHECK(text.find("best strict precision") != std::string::npos);
  CHECK(text.find("best mixed precision") != std::string::npos);
  CHECK(text.find("autocast") != std::string::npos);
  const auto json = tuner::gpu_recommendation_json(recommendation, false);
  CHECK(json.contains("best_strict_precision"));
  CHECK(json.contains("best_mixed_precision"));
  CHECK_FALSE(json.at("script_settings").empty());
  // A V100 has only fp32 and fp16 (x both formats): 3 x 3.
  CHECK(must(tuner::recommend_gpu(network, spec_gpu("v100"), gpu_efficiency_priors(), search)).space_size == 9);
}

TEST_CASE("a calibration's GPU is measured, other GPUs carry it over with a wider band") {
  const auto network = must(workloads::load_network("resnet50"));
  GpuEfficiencies measured = gpu_efficiency_priors();
  measured.measured_on = "h200";
  measured.measured_precisions = {"tf32"};
  measured.log_sd = 0.10;
  // Fitted on this GPU in this precision, but none of these passes timed: calibrated; with every
  // pass of the network timed, partly measured (a real step alone makes an answer "measured").
  const auto on_h200 = must(predict_gpu(network, spec_gpu("h200"), measured, at(64, GpuPrecision::tf32)));
  CHECK(on_h200.confidence == "calibrated");
  GpuEfficiencies timed = measured;
  for (const workloads::Layer& layer : network.layers)
    for (const workloads::Pass pass : workloads::all_passes)
      timed.measured_passes.insert(gpu_pass_key(layer.descriptor, workloads::pass_name(pass), 64));
  const auto all_timed = must(predict_gpu(network, spec_gpu("h200"), timed, at(64, GpuPrecision::tf32)));
  CHECK(all_timed.confidence == "partly measured");
  CHECK(all_timed.measured_fraction == Approx(1));
  CHECK(all_timed.images_per_second == Approx(on_h200.images_per_second));
  const auto bf16 = must(predict_gpu(network, spec_gpu("h200"), measured, at(64, GpuPrecision::bf16)));
  CHECK(bf16.confidence == "calibrated");
  const auto on_a100 = must(predict_gpu(network, spec_gpu("a100"), measured, at(64, GpuPrecision::tf32)));
  CHECK(on_a100.confidence == "carried over");
  const auto width = [](const GpuPrediction& p) { return p.images_per_second_high / p.images_per_second_low; };
  CHECK(width(on_a100) > width(on_h200));
  CHECK(width(bf16) > width(on_h200));
  CHECK(must(predict_gpu(network, spec_gpu("h200"), gpu_efficiency_priors(), at(64, GpuPrecision::tf32))).confidence ==
        "spec");
}

TEST_CASE("a precision record round-trips and keys apart") {
  records::Measurement record;
  record.backend = "torch-cuda";
  record.descriptor = "relu:ic64ih56iw56";
  record.pass = "forward";
  record.batch = 32;
  record.median_seconds = record.min_seconds = record.max_seconds = 1e-4;
  record.repetitions = 10;
  record.precision = "bf16";
  record.memory_format = "channels_last";
  const auto back = must(records::measurement_from_json_line(records::to_json_line(record), "test"));
  CHECK(back.precision == "bf16");
  CHECK(back.memory_format == "channels_last");
  records::Measurement tf32 = record;
  tf32.precision = "tf32";
  CHECK(records::measurement_key(tf32) != records::measurement_key(record));
  // A written strict fp32 record stays strict; a torch-cuda record from before the field ran
  // PyTorch's defaults: TF32 convolutions.
  std::string old = records::to_json_line(tf32);
  CHECK(old.find("\"precision\"") != std::string::npos);
  records::Measurement plain = record;
  plain.precision = "fp32";
  plain.memory_format = "contiguous";
  const std::string line = records::to_json_line(plain);
  CHECK(line.find("\"precision\"") == std::string::npos);
  CHECK(must(records::measurement_from_json_line(line, "test")).precision == "fp32");
  // Version 1 had no field: its torch-cuda records are migrated to tf32 (records/measurement_v1.hpp).
  std::string v1 = line;
  const std::string version = "\"schema_version\":2";
  REQUIRE(v1.find(version) != std::string::npos);
  v1.replace(v1.find(version), version.size(), "\"schema_version\":1");
  CHECK(must(records::measurement_from_json_line(v1, "test")).precision == "tf32");
  auto bad = line;
  bad.insert(bad.size() - 1, ",\"precision\":\"fp8\"");
  CHECK_FALSE(records::measurement_from_json_line(bad, "test"));
}
