// calibrate/naive_reference.hpp — what each layer pass must compute, written as the plainest
// loops over plain NCHW data (PyTorch's definitions: output sizes, padding, average-pooling
// divisors, biased batch variance, mean cross-entropy), and the numerical check that holds
// every backend to it on one small layer of each kind before anything is timed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/layer_backend.hpp"
#include "workloads/costs.hpp"
#include "workloads/layer.hpp"

namespace dnntune::calibrate {

// The outputs of `pass` for `inputs` (both in layer_operands.hpp order and plain layout).
// Dropout has no single right answer (its mask is random): its reference is empty.
std::vector<std::vector<float>> reference_outputs(const workloads::LayerSpec& spec, std::int64_t batch,
                                                  workloads::Pass pass, const std::vector<std::vector<float>>& inputs);

struct CheckResult {
  std::string descriptor;
  workloads::Pass pass = workloads::Pass::forward;
  workloads::LayerKind kind = workloads::LayerKind::input;
  bool implemented = true;  // false: the backend has no kernel for it (not a failure)
  bool passed = false;
  double relative_error = 0;  // the largest |backend - reference| / max |reference|, over outputs
  std::string reason;         // why it failed or is unimplemented
};

// The largest relative error a pass may show (fp32 sums in another order).
constexpr double check_tolerance = 1e-3;

// The small layers the check runs: one of each kind, a few variants (bias, stride, padding,
// groups, ceil mode, average pooling without the padding) where kernels differ.
std::vector<workloads::LayerSpec> check_layers();

// Runs every pass of every check layer on `backend` (threads as set) and compares it with the
// reference. Dropout passes when each output is either 0 or its input scaled by 1/(1-p) and
// about p of them are 0.
std::vector<CheckResult> check_backend(LayerBackend& backend);

}  // namespace dnntune::calibrate
