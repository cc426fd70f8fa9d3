// common/statistics.hpp — the median, the one summary every layer of dnntune takes of repeated
// timings (runs, steps, replicates): robust to the odd slow one that a shared machine produces.
#pragma once

#include <algorithm>
#include <vector>

namespace dnntune {

// The median of `values` (the mean of the middle two for an even count); 0 for none.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

}  // namespace dnntune
