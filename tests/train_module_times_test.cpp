// tests/train_module_times_test.cpp — `dnntune train --module-times` on the tiny network: every
// layer timed inside the real step, the layers' forwards summing to the measured forward (the
// rest is untimed glue, a few percent), the same for backward, and the kind module records.
// Bounds on sums only, never absolute timings.
#include <catch2/catch.hpp>

#include <set>

#include <nlohmann/json.hpp>

#include "records/measurement.hpp"
#include "tests/cli_support.hpp"

using dnntune::test::run_dnntune;
using nlohmann::json;

TEST_CASE("the layers timed inside the step sum to the step's forward and backward") {
  const std::string records = dnntune::test::make_temporary_directory() + "/train.jsonl";
  // Batch 64 so that the layers' ops, not the loop around them, fill the step.
  const auto run = run_dnntune({"train", "--model", dnntune::test::source_path("tests/fixtures/tiny_network.json"),
                                "--batch", "64", "--iters", "5", "--warmup", "1", "--threads", "1", "--module-times",
                                "--record", records, "--json"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const json report = json::parse(run.out);
  REQUIRE(report.contains("module_times"));
  const json& modules = report["module_times"];
  for (const char* pass : {"forward", "backward"}) {
    INFO(pass);
    const double step = report["timings"][pass]["median_seconds"];
    const double sum = modules[std::string(pass) + "_sum"]["median_seconds"];
    CHECK(sum <= step);         // the layers run inside the pass
    CHECK(sum >= 0.85 * step);  // the glue around them is small
  }
  std::set<std::string> names;
  for (const json& module : modules["modules"]) {
    names.insert(module["module"].get<std::string>());
    CHECK(module["forward"]["repetitions"] == 5);
  }
  CHECK(names.count("conv1"));
  CHECK(names.count("block.conv"));
  CHECK_FALSE(names.count("input"));  // no op of its own

  const auto file = dnntune::records::read_measurements(records);
  REQUIRE(file);
  int forwards = 0, backwards = 0;
  for (const auto& record : file->records) {
    if (record.kind != dnntune::records::MeasurementKind::module) continue;
    CHECK(record.network == "tiny_residual");
    CHECK(record.batch == 64);
    CHECK(names.count(record.module));
    CHECK(record.median_seconds > 0);
    (record.pass == "forward" ? forwards : backwards) += 1;
  }
  CHECK(forwards == static_cast<int>(names.size()));
  CHECK(backwards >= 3);  // at least the convolutions and the classifier ran backward
}

TEST_CASE("module times on a GPU are refused with one line") {
  const auto run = run_dnntune({"train", "--model", dnntune::test::source_path("tests/fixtures/tiny_network.json"),
                                "--device", "cuda", "--module-times"});
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--module-times") != std::string::npos);
}
