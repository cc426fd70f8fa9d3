// model/setup_calls.hpp — whether PyTorch's runs of two whole setups (model/measured_setups.hpp)
// settle the call between them: the one rule by which a first run times a deciding setup again
// (pipeline/separating_anchors.hpp, run_setup_check) and the answer says a call is open
// (tuner::recommend_allocator). Why: an anchor whose runs move more than the difference it decides
// cannot decide it, and one run of a small VM can move more than two layouts differ (docs/results.md).
#pragma once

#include "model/measured_setups.hpp"

namespace dnntune::model {

// How far PyTorch's runs of `setup` move from one to the next: the sample spread of the logs of its
// run medians; 0 with fewer than two runs.
double setup_run_log_sd(const MeasuredSetup& setup);

// The call between two setups as their runs make it.
struct SetupCall {
  double apart_log = 0;       // |log| of the ratio of their images/s
  double half_width_log = 0;  // what the difference of their medians moves, at 90%
  // The runs move more than the difference: neither setup can be called the faster.
  bool open() const { return !(apart_log > half_width_log); }
};

// `a` against `b`: the half width is z90 x sd x sqrt(1/runs(a) + 1/runs(b)), sd the larger of
// `floor_log_sd` (what a run moves where its own runs cannot show it: one run, or two alike) and
// each setup's own setup_run_log_sd.
SetupCall compare_setups(const MeasuredSetup& a, const MeasuredSetup& b, double floor_log_sd);

}  // namespace dnntune::model
