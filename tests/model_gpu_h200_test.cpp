// tests/model_gpu_h200_test.cpp — the GPU model against the measured H200 (../shared/measured/
// h200-2026-12-04 beside the source tree, or $DNNTUNE_SHARED/measured/...): the fit of its 282
// torch-cuda layer passes, and whole training steps of the C++ trainer and of PyTorch from Python
// predicted with that fit. Fails when the fit drifts past its targets; passes with a WARN when
// the records are absent (Catch2 v2 has no skip).
#include <catch2/catch.hpp>

#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "data/builtin_machines.hpp"
#include "model/gpu_calibration.hpp"
#include "model/gpu_predictor.hpp"
#include "workloads/zoo.hpp"

using namespace dnntune;
using namespace dnntune::model;

namespace {

std::string measured_folder() {
  const char* shared = std::getenv("DNNTUNE_SHARED");
  return (shared ? std::string(shared) : std::string(DNNTUNE_SOURCE_DIR) + "/../shared") + "/measured/h200-2026-12-04";
}

std::vector<records::Measurement> layer_records(const std::string& folder) {
  std::vector<records::Measurement> out;
  std::ifstream in(folder + "/calibration/layers.jsonl");
  std::string line;
  while (std::getline(in, line))
    if (auto record = records::measurement_from_json_line(line, "layers.jsonl")) out.push_back(*record);
  return out;
}

struct StepRow {
  const char* network;
  std::int64_t batch;
  GpuPrecision precision;
  GpuMemoryFormat memory_format;
  double measured;  // images/s: the median of the recorded runs (the folder's README and pytorch_resnet50.tsv)
  const char* by;
};

// The C++ trainer's two runs per row (README's table; their median) and PyTorch's median of 3 x 20 steps.
const StepRow step_rows[] = {
    {"resnet50", 32, GpuPrecision::tf32, GpuMemoryFormat::contiguous, (1323 + 1509) / 2.0, "C++ trainer"},
    {"resnet50", 64, GpuPrecision::tf32, GpuMemoryFormat::contiguous, (1767 + 1753) / 2.0, "C++ trainer"},
    {"resnet152", 32, GpuPrecision::tf32, GpuMemoryFormat::contiguous, (410 + 656) / 2.0, "C++ trainer"},
    {"resnet152", 64, GpuPrecision::tf32, GpuMemoryFormat::contiguous, (759 + 815) / 2.0, "C++ trainer"},
    {"resnet50", 32, GpuPrecision::tf32, GpuMemoryFormat::contiguous, 1455.8, "PyTorch"},
    {"resnet50", 64, GpuPrecision::tf32, GpuMemoryFormat::contiguous, 1998.1, "PyTorch"},
    {"resnet50", 128, GpuPrecision::tf32, GpuMemoryFormat::contiguous, 2137.8, "PyTorch"},
    {"resnet50", 256, GpuPrecision::tf32, GpuMemoryFormat::contiguous, 2216.6, "PyTorch"},
    {"resnet50", 64, GpuPrecision::fp32, GpuMemoryFormat::contiguous, 939.7, "PyTorch"},
    {"resnet50", 256, GpuPrecision::bf16, GpuMemoryFormat::channels_last, 4711.7, "PyTorch"},
};

// Drift guards (docs/results.md: per pass 7.3%, held out by layer shape 17.5%; steps 5.4%
// median, 15.9% at worst, 10 of 10 inside the band): issue 40's targets, 8% per pass, 10% and
// 20% for the steps, all met; the held-out error and the band just above what the model
// reaches. Tighten these as the model improves, never loosen them.
constexpr double per_pass_target = 0.08;
constexpr double held_out_target = 0.18;
constexpr double step_median_target = 0.10;
constexpr double step_worst_target = 0.20;
constexpr int rows_inside_band = 9;

}  // namespace

TEST_CASE("the measured H200: per-pass fit and whole steps within their targets") {
  const std::string folder = measured_folder();
  if (!std::filesystem::exists(folder + "/calibration/layers.jsonl")) {
    WARN("SKIPPED: no measured H200 records at " + folder + " (set DNNTUNE_SHARED)");
    return;
  }
  const auto records = layer_records(folder);
  REQUIRE(records.size() == 282);
  const GpuNode h200 = *gpu_node(*data::load_machine("h200"));
  const auto calibration = fit_gpu_calibration(records, h200, gpu_efficiency_priors());
  REQUIRE(calibration);
  INFO(gpu_calibration_text(*calibration));
  std::vector<double> errors;
  std::string table;
  int inside = 0;
  for (const StepRow& row : step_rows) {
    GpuConfiguration configuration;
    configuration.batch_per_gpu = row.batch;
    configuration.precision = row.precision;
    configuration.memory_format = row.memory_format;
    const auto prediction =
        predict_gpu(*workloads::load_network(row.network), h200, calibration->efficiencies, configuration);
    REQUIRE(prediction);
    const double error = prediction->images_per_second / row.measured - 1;
    errors.push_back(std::abs(error));
    inside += row.measured >= prediction->images_per_second_low && row.measured <= prediction->images_per_second_high;
    table += std::string(row.by) + " " + row.network + " b" + std::to_string(row.batch) + " " +
             gpu_precision_name(row.precision) + ": predicted " + std::to_string(prediction->images_per_second) +
             " measured " + std::to_string(row.measured) + " (" + std::to_string(100 * error) + "%)\n";
  }
  INFO(table);
  std::vector<double> sorted = errors;
  std::sort(sorted.begin(), sorted.end());
  const double median_error = (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  WARN("per-pass median |error| " << 100 * calibration->fitted_median_error << "%, held out "
                                  << 100 * calibration->held_out_median_error << "%; steps: median |error| "
                                  << 100 * median_error << "%, worst " << 100 * sorted.back() << "%, " << inside
                                  << " of " << errors.size() << " inside the band\n"
                                  << table);
  CHECK(calibration->fitted_median_error <= per_pass_target);
  CHECK(median_error <= step_median_target);
  CHECK(sorted.back() <= step_worst_target);
  CHECK(calibration->held_out_median_error <= held_out_target);
  CHECK(inside >= rows_inside_band);
}
