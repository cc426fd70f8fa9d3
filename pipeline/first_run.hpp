// pipeline/first_run.hpp — the stages of a first run, in the order its plan keeps
// (first_run_plan.hpp): the layer micro-runs of priority 1, the base anchor, the allocator
// variants, the first fit and the separating anchors, the answer's setups timed by PyTorch, a
// variant left out, the other micro-runs, then the repeated base anchor and the close calls with
// what is left. Each stage is replanned from what was measured before it. For
// default_calibration.cpp, which owns the cache entry and its lock; not part of the library's
// interface.
#pragma once

#include <chrono>

#include "calibrate/runner.hpp"
#include "common/expected.hpp"
#include "pipeline/cache_entry.hpp"
#include "pipeline/first_run_plan.hpp"

namespace dnntune::pipeline {

// The plan's estimates for a first run of `prepared` on what `entry` has recorded: `budget_seconds`
// the whole run, `probe_seconds` what its probe took.
Expected<FirstRunEstimates> first_run_estimates(const Entry& entry, const calibrate::PreparedCalibration& prepared,
                                                double budget_seconds, double probe_seconds);

// The first run after the lock and the announcement of its start (`started`): measures, fits and
// returns the calibration covering `wanted`, extending `coverage` with it.
Expected<DefaultCalibration> first_run(const Entry& entry, const DefaultCalibrationRequest& request,
                                       const Coverage& wanted, Coverage& coverage,
                                       std::chrono::steady_clock::time_point started);

}  // namespace dnntune::pipeline
