// pipeline/first_run.hpp — a first run on a cache entry: the real work behind its stages
// (first_run_stages.hpp: micro-runs, trainers, fits on the entry's records) and the steady clock,
// handed to the loop that decides, stage by stage in the plan's order (first_run_plan.hpp), what
// runs and with which share. For default_calibration.cpp, which owns the cache entry and its
// lock; not part of the library's interface.
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
