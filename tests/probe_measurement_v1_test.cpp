// tests/probe_measurement_v1_test.cpp — measurement records v2: version 1 records recorded by
// dnntune (tests/fixtures/v1_records: layer micro-runs on CPU and on an H200, calibrate's
// whole-network run, the C++ trainer's anchors with and without --module-times, a kind module
// record, a run by the python runner with --bucket-mb, a run of a network file, an MPI sweep)
// migrate on read into the typed fields, and v2 records round-trip and are checked.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "records/measurement.hpp"
#include "tests/cli_support.hpp"

using namespace dnntune;

namespace {

std::vector<records::Measurement> fixture(const std::string& name) {
  const auto file = records::read_measurements(test::source_path("tests/fixtures/v1_records/" + name));
  REQUIRE(file);
  CHECK(file->truncated_lines == 0);
  return file->records;
}

// A v2 line of `record` with `field` set to `value`.
std::string with_field(const records::Measurement& record, const std::string& field, const nlohmann::json& value) {
  auto document = nlohmann::json::parse(records::to_json_line(record));
  document[field] = value;
  return document.dump();
}

records::Measurement trained_record() {
  records::Measurement record;
  record.kind = records::MeasurementKind::network;
  record.backend = "torch";
  record.network = "resnet18";
  record.network_source = "resnet18";
  record.pass = "iteration";
  record.batch = 8;
  record.median_seconds = 0.5;
  record.repetitions = 3;
  record.trainer = records::kCppTrainer;
  record.warmup_steps = 2;
  record.steps = 3;
  record.bucket_megabytes = 25;
  return record;
}

}  // namespace

TEST_CASE("v1 layer and calibrate records migrate: no trainer, their network source, TF32 on torch-cuda") {
  const auto layers = fixture("layers.jsonl");
  REQUIRE(layers.size() == 4);
  for (const auto& record : layers) {
    CHECK(record.trainer.empty());
    CHECK(record.warmup_steps == 0);
    CHECK(record.steps == 0);
    CHECK(record.bucket_megabytes == 0);
    CHECK(record.memory_format == "contiguous");
  }
  CHECK(layers[0].kind == records::MeasurementKind::layer);
  CHECK(layers[0].network_source.empty());
  CHECK(layers[0].precision == "fp32");
  // calibrate's whole-network run (kind network, pass forward_backward): a source, no trainer.
  CHECK(layers[2].kind == records::MeasurementKind::network);
  CHECK(layers[2].pass == "forward_backward");
  CHECK(layers[2].network_source == "resnet18");
  // PyTorch's default lets cuDNN run fp32 convolutions on TF32 tensor cores.
  CHECK(layers[3].backend == "torch-cuda");
  CHECK(layers[3].precision == "tf32");
}

TEST_CASE("v1 training records migrate to their trainer, steps, warm-up, bucket and network source") {
  const auto runs = fixture("network.jsonl");
  REQUIRE(runs.size() == 5);
  // An anchor of the C++ trainer (no --runner, no --bucket-mb: train's defaults).
  CHECK(runs[0].trainer == records::kCppTrainer);
  CHECK(records::trained_by_cpp_trainer(runs[0]));
  CHECK(runs[0].warmup_steps == 2);
  CHECK(runs[0].steps == 3);
  CHECK(runs[0].bucket_megabytes == 25);
  CHECK(runs[0].network_source == "resnet18");
  CHECK(runs[0].precision == "fp32");
  CHECK(runs[1].trainer == records::kCppTrainer);
  CHECK(runs[1].warmup_steps == 1);
  CHECK(runs[1].steps == 2);
  // A layer timed inside that run's step.
  CHECK(runs[2].kind == records::MeasurementKind::module);
  CHECK(runs[2].module == "conv1");
  CHECK(runs[2].trainer == records::kCppTrainer);
  CHECK(runs[2].warmup_steps == 1);
  // The python runner with --bucket-mb 10.
  CHECK(runs[3].trainer == records::kPythonTrainer);
  CHECK_FALSE(records::trained_by_cpp_trainer(runs[3]));
  CHECK(runs[3].bucket_megabytes == 10);
  CHECK(runs[3].steps == 2);
  // A network file: its path is the source, its name the network.
  CHECK(runs[4].network == "tiny_residual");
  CHECK(runs[4].network_source == "tests/fixtures/tiny_network.json");
  CHECK(runs[4].trainer == records::kCppTrainer);
}

TEST_CASE("v1 communication records migrate to no trainer and no network source") {
  const auto sweep = fixture("comm.jsonl");
  REQUIRE(sweep.size() == 1);
  CHECK(sweep[0].kind == records::MeasurementKind::communication);
  CHECK(sweep[0].trainer.empty());
  CHECK(sweep[0].network_source.empty());
  CHECK(sweep[0].precision == "fp32");
}

TEST_CASE("migrated records are written as v2 and read back the same") {
  for (const char* name : {"layers.jsonl", "network.jsonl", "comm.jsonl"})
    for (const auto& record : fixture(name)) {
      const std::string line = records::to_json_line(record);
      CHECK(nlohmann::json::parse(line).at("schema_version") == 2);
      const auto back = records::measurement_from_json_line(line, name);
      REQUIRE(back);
      CHECK(records::to_json_line(*back) == line);
      CHECK(records::measurement_key(*back) == records::measurement_key(record));
      CHECK(back->trainer == record.trainer);
      CHECK(back->warmup_steps == record.warmup_steps);
      CHECK(back->steps == record.steps);
      CHECK(back->bucket_megabytes == record.bucket_megabytes);
      CHECK(back->network_source == record.network_source);
      CHECK(back->precision == record.precision);
      CHECK(back->memory_format == record.memory_format);
      CHECK(back->command == record.command);  // kept for people
    }
}

TEST_CASE("v2 writes the typed fields only where they apply") {
  records::Measurement layer;
  layer.median_seconds = 1;
  const auto plain = nlohmann::json::parse(records::to_json_line(layer));
  for (const char* absent :
       {"precision", "memory_format", "trainer", "warmup_steps", "steps", "bucket_megabytes", "network_source"})
    CHECK_FALSE(plain.contains(absent));
  layer.precision = "bf16";
  layer.memory_format = "channels_last";
  const auto gpu = nlohmann::json::parse(records::to_json_line(layer));
  CHECK(gpu.at("precision") == "bf16");
  CHECK(gpu.at("memory_format") == "channels_last");
  const auto trained = nlohmann::json::parse(records::to_json_line(trained_record()));
  CHECK(trained.at("trainer") == "dnntune");
  CHECK(trained.at("warmup_steps") == 2);
  CHECK(trained.at("steps") == 3);
  CHECK(trained.at("bucket_megabytes") == 25);
  CHECK(trained.at("network_source") == "resnet18");
}

TEST_CASE("the key tells trainers, warm-ups, buckets, precisions and memory formats apart") {
  const auto base = trained_record();
  const std::string key = records::measurement_key(base);
  auto other = base;
  other.trainer = records::kPythonTrainer;
  CHECK(records::measurement_key(other) != key);
  other = base;
  other.warmup_steps = 1;
  CHECK(records::measurement_key(other) != key);
  other = base;
  other.bucket_megabytes = 10;
  CHECK(records::measurement_key(other) != key);
  other = base;
  other.precision = "tf32";
  CHECK(records::measurement_key(other) != key);
  other = base;
  other.memory_format = "channels_last";
  CHECK(records::measurement_key(other) != key);
  other = base;
  other.steps = 50;  // how many steps were timed is the result's, not the problem's
  CHECK(records::measurement_key(other) == key);
}

TEST_CASE("v2 refuses unknown words and negative counts in one line naming the place") {
  const auto record = trained_record();
  REQUIRE(records::measurement_from_json_line(records::to_json_line(record), "f.jsonl:3"));
  for (const auto& [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{{"precision", "fp8"},
                                                                                        {"memory_format", "nhwc"},
                                                                                        {"trainer", "java"},
                                                                                        {"warmup_steps", -1},
                                                                                        {"steps", -2},
                                                                                        {"bucket_megabytes", -0.5},
                                                                                        {"precision", 16}}) {
    INFO(field << " = " << value.dump());
    const auto refused = records::measurement_from_json_line(with_field(record, field, value), "f.jsonl:3");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("f.jsonl:3") == 0);
    CHECK(refused.error().message.find('\n') == std::string::npos);
  }
  // A training record without its steps is incomplete.
  auto document = nlohmann::json::parse(records::to_json_line(record));
  document.erase("warmup_steps");
  CHECK_FALSE(records::measurement_from_json_line(document.dump(), "f.jsonl:3"));
  // Other versions than 1 and 2 are refused, as before.
  CHECK_FALSE(records::measurement_from_json_line(with_field(record, "schema_version", 3), "f.jsonl:3"));
}
