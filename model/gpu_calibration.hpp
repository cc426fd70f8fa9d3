// model/gpu_calibration.hpp — a GPU reference calibration: the GPU model's kernel efficiencies
// fitted to torch-cuda micro-runs of layer passes (dnntune calibrate --backend torch-cuda), with
// every measured pass checked against the prediction before (priors) and after the fit. What a
// spec GPU's predictions carry over once measured (predict --machine GPU --calibration FILE).
//
// The fit: each record is predicted with the priors and classed by what limits it (compute,
// memory or overhead). Per kernel class, the compute efficiency of each pass is divided by the
// median measured/predicted ratio of its compute-bound records, the memory efficiency by that of
// its memory-bound records; the host dispatch time per op becomes the median of the
// overhead-bound records' times. Medians, so that one odd kernel choice does not move a class.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"
#include "model/gpu_layer_time.hpp"
#include "model/gpu_node.hpp"
#include "records/measurement.hpp"

namespace dnntune::model {

constexpr const char* gpu_calibration_schema = "dnntune.gpu-calibration";
constexpr int gpu_calibration_schema_version = 1;

struct GpuPassCheck {
  std::string descriptor;
  std::string pass;
  std::int64_t batch = 0;
  double measured_seconds = 0;
  double prior_seconds = 0;   // predicted with the priors
  double fitted_seconds = 0;  // predicted with the fitted efficiencies
};

struct GpuCalibration {
  std::string machine;          // the GPU profile the measurements were taken on ("h200")
  std::string backend_version;  // "libtorch 2.11.0"
  GpuEfficiencies efficiencies;
  std::vector<GpuPassCheck> checks;
  double prior_median_error = 0;  // median |predicted / measured - 1| over the checks
  double fitted_median_error = 0;
  double held_out_median_error = 0;  // fitted on half the records, checked on the other half
};

// Fits to the ok "torch-cuda" layer records of one process; fails when there are none.
Expected<GpuCalibration> fit_gpu_calibration(const std::vector<records::Measurement>& records, const GpuNode& node,
                                             const GpuEfficiencies& priors);

std::string to_json_text(const GpuCalibration& calibration);
Expected<GpuCalibration> gpu_calibration_from_json_text(const std::string& text, const std::string& origin_name);
Expected<GpuCalibration> read_gpu_calibration(const std::string& path);

// The efficiencies GPU predictions use without a calibration of their own: those of a reference
// calibration's text (data::builtin_reference_calibration("torch-cuda"), once one is measured),
// else the documented priors (GpuEfficiencies::source says which). One rule for the command and
// the Python module.
Expected<GpuEfficiencies> reference_gpu_efficiencies(const char* reference_text);

// The fit report: the efficiencies per class and the per-pass errors before and after.
std::string gpu_calibration_text(const GpuCalibration& calibration);

}  // namespace dnntune::model
