// tests/train_module_times_test.cpp — `dnntune train --module-times` on the tiny network: every
// layer timed inside the real step (the last warm-up one, scaled to the timed steps), the
// layers' forwards summing to the measured forward (the rest is untimed glue, a few percent), the
// same for backward, and the kind module records.
// And micro-runs under a chosen allocator (`calibrate --allocator`) set against steps under it.
// Bounds on sums only, never absolute timings.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "records/measurement.hpp"
#include "tests/cli_support.hpp"

using dnntune::test::run_dnntune;
using nlohmann::json;

TEST_CASE("the layers timed inside the step sum to the step's forward and backward") {
  const std::string records = dnntune::test::make_temporary_directory() + "/train.jsonl";
  // The layers are timed in one step: batch 512 makes its forward (13 ms here) long against a
  // scheduler time slice, so that one preemption between two layers under load (CI: 0.9 ms of a
  // 4.4 ms forward at batch 64) does not pass for glue.
  const auto run =
      run_dnntune({"train", "--model", dnntune::test::source_path("tests/fixtures/tiny_network.json"), "--batch", "512",
                   "--iters", "5", "--warmup", "1", "--threads", "1", "--module-times", "--record", records, "--json"});
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
    CHECK(module["forward"]["repetitions"] == 1);  // the one warm-up step the layers were timed in
  }
  CHECK(names.count("conv1"));
  CHECK(names.count("block.conv"));
  CHECK_FALSE(names.count("input"));  // no op of its own

  const auto file = dnntune::records::read_measurements(records);
  REQUIRE(file);
  int forwards = 0, backwards = 0;
  std::map<std::string, double> network_passes;
  for (const auto& record : file->records)
    if (record.kind == dnntune::records::MeasurementKind::network) network_passes[record.pass] = record.median_seconds;
  REQUIRE(network_passes.count("forward_modules"));
  REQUIRE(network_passes.count("backward_modules"));
  CHECK(network_passes["forward_modules"] <= network_passes["forward"]);
  CHECK(network_passes["backward_modules"] <= network_passes["backward"]);
  for (const auto& record : file->records) {
    if (record.kind != dnntune::records::MeasurementKind::module) continue;
    CHECK(record.network == "tiny_residual");
    CHECK(record.batch == 512);
    CHECK(names.count(record.module));
    CHECK(record.median_seconds > 0);
    (record.pass == "forward" ? forwards : backwards) += 1;
  }
  CHECK(forwards == static_cast<int>(names.size()));
  CHECK(backwards >= 3);  // at least the convolutions and the classifier ran backward
}

TEST_CASE("module times on a GPU, or without a warm-up step to time the layers in, are refused with one line") {
  const std::string tiny = dnntune::test::source_path("tests/fixtures/tiny_network.json");
  for (const auto& arguments :
       {std::vector<std::string>{"--device", "cuda"}, std::vector<std::string>{"--warmup", "0"}}) {
    std::vector<std::string> command{"train", "--model", tiny, "--module-times"};
    command.insert(command.end(), arguments.begin(), arguments.end());
    const auto run = run_dnntune(command);
    INFO(run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("--module-times") != std::string::npos);
    CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  }
}

TEST_CASE("calibrate --report --modules sets the micro-runs against the layers inside the step") {
  const std::string directory = dnntune::test::make_temporary_directory();
  const std::string tiny = dnntune::test::source_path("tests/fixtures/tiny_network.json");
  // Without anchors, or with anchors that timed no modules: one clear line, exit 2.
  const auto empty = run_dnntune({"calibrate", "--report", directory, "--modules"});
  CHECK(empty.exit_code == 2);
  CHECK(empty.err.find("network.jsonl") != std::string::npos);
  REQUIRE(run_dnntune({"train", "--model", tiny, "--batch", "8", "--iters", "2", "--warmup", "1", "--threads", "1",
                       "--record", directory + "/network.jsonl"})
              .exit_code == 0);
  const auto no_modules = run_dnntune({"calibrate", "--report", directory, "--modules"});
  CHECK(no_modules.exit_code == 2);
  CHECK(no_modules.err.find("--module-times") != std::string::npos);

  dnntune::test::write_machine_profile_with_stated_peaks(directory);  // the probe is not what is tested
  const auto calibrated = run_dnntune({"calibrate", "--model", tiny, "--backend", "torch", "--batch", "8", "--threads",
                                       "1", "--processes", "1", "--no-smt", "-o", directory});
  INFO(calibrated.err);
  REQUIRE(calibrated.exit_code == 0);
  REQUIRE(run_dnntune({"train", "--model", tiny, "--batch", "8", "--iters", "3", "--warmup", "1", "--threads", "1",
                       "--module-times", "--record", directory + "/network.jsonl"})
              .exit_code == 0);
  const auto run = run_dnntune({"calibrate", "--report", directory, "--modules", "--json"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const json report = json::parse(run.out);
  CHECK(report["schema"] == "dnntune.module-report");
  REQUIRE(report["passes"].size() == 2);
  for (const json& row : report["passes"]) {
    INFO(row.dump());
    CHECK(row["network"] == "tiny_residual");
    CHECK(row["batch"] == 8);
    CHECK(row["missing_passes"] == 0);  // the calibration measured every layer pass the network runs
    CHECK(row["measured_passes"].get<int>() > 0);
    CHECK(row["isolated_seconds"].get<double>() > 0);
    CHECK(row["in_network_seconds"].get<double>() > 0);
    CHECK(row["in_network_seconds"].get<double>() <= row["step_seconds"].get<double>());
    CHECK(row["isolated_over_step"].get<double>() ==
          Approx(row["isolated_seconds"].get<double>() / row["step_seconds"].get<double>()));
  }
  CHECK_FALSE(report["worst_modules"].empty());
  const auto text = run_dnntune({"calibrate", "--report", directory, "--modules"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("tiny_residual") != std::string::npos);
}

TEST_CASE("calibrate --allocator times the micro-runs under it, set against steps under the same allocator") {
  const std::string directory = dnntune::test::make_temporary_directory() + "/tuned";
  const std::string tiny = dnntune::test::source_path("tests/fixtures/tiny_network.json");
  // Checked before anything is written: an unknown allocator, or one with the anchors.
  const auto unknown = run_dnntune({"calibrate", "--model", tiny, "--allocator", "nosuch", "-o", directory});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("nosuch") != std::string::npos);
  const auto with_anchor =
      run_dnntune({"calibrate", "--model", tiny, "--allocator", "glibc-tuned", "--anchor", "-o", directory});
  CHECK(with_anchor.exit_code == 2);
  CHECK(with_anchor.err.find("--anchor") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(directory));

  std::filesystem::create_directory(directory);
  dnntune::test::write_machine_profile_with_stated_peaks(directory);  // the probe is not what is tested
  const auto calibrated =
      run_dnntune({"calibrate", "--model", tiny, "--backend", "torch", "--batch", "8", "--threads", "1", "--processes",
                   "1", "--no-smt", "--allocator", "glibc-tuned", "-o", directory});
  INFO(calibrated.err);
  REQUIRE(calibrated.exit_code == 0);
  const auto layers = dnntune::records::read_measurements(directory + "/layers.jsonl");
  REQUIRE(layers);
  REQUIRE_FALSE(layers->records.empty());
  for (const auto& record : layers->records) {
    CHECK(record.allocator == "glibc-tuned");
    CHECK(record.command.find("--allocator glibc-tuned") != std::string::npos);
  }
  // Steps under the default allocator have no micro-runs of theirs here; steps under glibc-tuned do.
  for (const char* allocator : {"default", "glibc-tuned"})
    REQUIRE(run_dnntune({"train", "--model", tiny, "--batch", "8", "--iters", "2", "--warmup", "1", "--threads", "1",
                         "--allocator", allocator, "--module-times", "--record", directory + "/network.jsonl"})
                .exit_code == 0);
  const auto run = run_dnntune({"calibrate", "--report", directory, "--modules", "--json"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const json report = json::parse(run.out);
  REQUIRE(report["passes"].size() == 4);
  for (const json& row : report["passes"]) {
    INFO(row.dump());
    if (row["allocator"] == "glibc-tuned") {
      CHECK(row["missing_passes"] == 0);
      CHECK(row["isolated_seconds"].get<double>() > 0);
    } else {
      CHECK(row["allocator"] == "default");
      CHECK(row["measured_passes"] == 0);
    }
  }
  // A fit uses default-allocator micro-runs only: these are not its data.
  const auto fit = run_dnntune({"fit", directory + "/layers.jsonl", "--machine", directory + "/machine.json", "-o",
                                directory + "/calibration.json"});
  CHECK(fit.exit_code != 0);
}
