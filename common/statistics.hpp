// common/statistics.hpp — the summaries dnntune takes of repeated figures (runs, steps,
// replicates, log errors): the median, robust to the odd slow one a shared machine produces, and
// the mean and sample standard deviation.
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace dnntune {

// Standard deviations either side of the mean of a normal spread that hold 90% of it: every band
// dnntune prints is a 90% band, built from a (log) standard deviation times this.
inline constexpr double z_90_percent = 1.645;

// The median of `values` (the mean of the middle two for an even count); 0 for none.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

// The mean of `values`; 0 for none.
inline double mean(const std::vector<double>& values) {
  return values.empty() ? 0 : std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

// The sample standard deviation (n - 1 in the denominator); 0 for fewer than two values.
inline double sample_standard_deviation(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double average = mean(values);
  double squares = 0;
  for (const double value : values) squares += (value - average) * (value - average);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

}  // namespace dnntune
