// probe/timing.cpp — see timing.hpp.
#include "probe/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/statistics.hpp"

namespace dnntune::probe {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

TimingSummary summarize(std::vector<double> samples) {
  TimingSummary summary;
  if (samples.empty()) return summary;
  std::sort(samples.begin(), samples.end());
  const std::size_t count = samples.size();
  summary.repetitions = static_cast<int>(count);
  summary.min_seconds = samples.front();
  summary.max_seconds = samples.back();
  summary.median_seconds = median(samples);
  summary.mean_seconds = mean(samples);
  if (count > 1 && summary.mean_seconds > 0)
    summary.coefficient_of_variation = sample_standard_deviation(samples) / summary.mean_seconds;
  return summary;
}

TimingSummary time_repeatedly(const std::function<double()>& run_once, const TimingOptions& options) {
  for (int warmup = 0; warmup < options.warmup_runs; ++warmup) run_once();
  std::vector<double> samples;
  double total = 0;
  while (static_cast<int>(samples.size()) < options.max_repetitions &&
         (static_cast<int>(samples.size()) < options.min_repetitions || total < options.min_total_seconds)) {
    const double seconds = run_once();
    samples.push_back(seconds);
    total += seconds;
  }
  return summarize(std::move(samples));
}

}  // namespace dnntune::probe
