// pipeline/first_run_stages.hpp — the first run's decisions, stage by stage in the plan's order
// (first_run_order): each stage replanned within what is left (plan_first_run with the announced
// plan), given its share, run or skipped and said. The work itself (micro-runs, trainers, fits)
// is behind FirstRunWork and the time behind a clock, so that the decisions are tested with
// recorded stage costs and a clock of the test's own (tests/pipeline_first_run_plan_test.cpp);
// pipeline/first_run.cpp puts the real work and the steady clock behind them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "pipeline/default_calibration.hpp"
#include "pipeline/first_run_plan.hpp"

namespace dnntune::model {
struct Calibration;
}

namespace dnntune::pipeline {

// Seconds since the first run started (its announcement): the budget is counted from there.
using FirstRunClock = std::function<double()>;

// A fit of the measurements so far: the answer it makes, and the calibration as fitted then (a
// later fit rewrites the file; the anchors that rank candidates by this one keep it).
struct FirstRunFit {
  DefaultCalibration answer;
  std::shared_ptr<const model::Calibration> calibration;
};

// The base anchor's run: how many (network, batch) pairs it trained, and the timed steps of the
// first pair's (its time limit may have stopped them early).
struct BaseAnchorRun {
  int trained = 0;
  int timed_steps = 0;
};

// A round of anchors that rank the top candidates by a fit: `seconds` for each, except the first
// trained, which may take `first_seconds` where that is more (the closest call); `warmup_steps` a
// warm-up's cost in steady steps.
struct AnchorShare {
  double seconds = 0;
  double first_seconds = 0;
  double warmup_steps = 1;
};

// What each stage does, without deciding anything: every call does the work it is given within
// the seconds it is given (its trainers' time limits), says what it does through the progress
// callback, and returns what the decisions need. Counts are of measurements or anchors recorded.
class FirstRunWork {
 public:
  virtual ~FirstRunWork() = default;
  // The plan's estimates from what is recorded so far, for a first run of `budget_seconds` whose
  // probe took `probe_seconds`.
  virtual Expected<FirstRunEstimates> estimates(double budget_seconds, double probe_seconds) = 0;
  // Sets the estimates' step_seconds and kept_memory_step_seconds from what is recorded now.
  virtual Expected<void> estimate_steps(FirstRunEstimates& estimates) = 0;
  // What the first step at the base setting adds faulting in its memory, summed over the pairs.
  virtual double first_step_fault_seconds() = 0;
  // How many (network, batch) pairs the first run is for.
  virtual int pairs() = 0;
  // The layer passes of priority 1; false when no layer at all is measured (nothing for an anchor
  // to correct).
  virtual Expected<bool> layer_passes(double seconds) = 0;
  virtual Expected<BaseAnchorRun> base_anchor(double time_limit_seconds) = 0;
  // `variants` at the base setting, `timed_steps` each: the first whatever its estimate, the
  // others while they fit `seconds`.
  virtual Expected<int> allocator_anchors(const std::vector<std::string>& variants, int timed_steps,
                                          double seconds) = 0;
  // A fit; only the `last` one writes the coverage that marks the cache entry done.
  virtual Expected<FirstRunFit> fit(bool last) = 0;
  // Marks the entry done without a refit (nothing was measured since the first fit).
  virtual Expected<void> keep_coverage() = 0;
  virtual Expected<int> separating_anchors(const FirstRunFit& fit, const AnchorShare& share) = 0;
  // One PyTorch run of the answer's setups (run_setup_check); 0: nothing left to time or it does not fit.
  virtual Expected<int> setup_check(const FirstRunFit& fit, const AnchorShare& share) = 0;
  // One more run of a close call's side (run_close_call_anchor); 0: none left or it does not fit.
  virtual Expected<int> close_call(const FirstRunFit& fit, const AnchorShare& share) = 0;
  virtual Expected<int> more_layer_passes(double seconds) = 0;
  // The base anchor again (the C++ trainer, then PyTorch from Python) within `seconds`.
  virtual Expected<int> repeated_base_anchors(double seconds) = 0;
};

// The first run of `budget_seconds` after its lock and probe (`clock` counts from its start, the
// probe included): announces the plan, then runs the stages in first_run_order, each replanned
// within what is left; returns the calibration of the last fit (an empty path when nothing could
// be measured).
Expected<DefaultCalibration> run_first_run(FirstRunWork& work, double budget_seconds, const FirstRunClock& clock,
                                           const Progress& progress);

}  // namespace dnntune::pipeline
