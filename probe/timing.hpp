// probe/timing.hpp — timing discipline shared by every measurement (google/benchmark-style):
// warm-up, repetitions until both a minimum count and a minimum time are reached, then the
// median and the coefficient of variation. Single runs on a shared 2-core machine swing by
// several x: nothing in dnntune reports a single run.
#pragma once

#include <functional>
#include <vector>

namespace dnntune::probe {

struct TimingOptions {
  int warmup_runs = 1;
  int min_repetitions = 5;
  int max_repetitions = 50;
  double min_total_seconds = 0.2;  // keep repeating until this much time was measured
};

struct TimingSummary {
  double median_seconds = 0;
  double mean_seconds = 0;
  double min_seconds = 0;
  double max_seconds = 0;
  double coefficient_of_variation = 0;  // sample stddev / mean; 0 for one sample
  int repetitions = 0;
};

// Summary statistics of samples (seconds). Empty input gives an all-zero summary.
TimingSummary summarize(std::vector<double> samples);

// Times `run_once` (which returns the seconds it measured itself, so that set-up inside it is
// not counted) under `options`.
TimingSummary time_repeatedly(const std::function<double()>& run_once, const TimingOptions& options);

// Seconds since an arbitrary fixed point, monotonic.
double now_seconds();

}  // namespace dnntune::probe
