// train/comm/latency_bandwidth_fit.cpp — see latency_bandwidth_fit.hpp. Weighted linear least
// squares with weights 1/t^2 (relative error), solved from its 2x2 normal equations.
#include "train/comm/latency_bandwidth_fit.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <vector>

#include "probe/timing.hpp"

namespace dnntune::train::comm {

Expected<LatencyBandwidthFit> fit_latency_bandwidth(const std::vector<TimedMessage>& points) {
  std::set<std::int64_t> sizes;
  for (const TimedMessage& point : points) {
    if (!(point.seconds > 0) || point.bytes < 0)
      return bad_input("a communication time must be positive and a message size non-negative");
    sizes.insert(point.bytes);
  }
  if (sizes.size() < 2) return bad_input("fitting latency and bandwidth needs at least two message sizes");

  double sum_w = 0, sum_wx = 0, sum_wxx = 0, sum_wt = 0, sum_wxt = 0;
  for (const TimedMessage& point : points) {
    const double x = static_cast<double>(point.bytes), t = point.seconds, w = 1 / (t * t);
    sum_w += w;
    sum_wx += w * x;
    sum_wxx += w * x * x;
    sum_wt += w * t;
    sum_wxt += w * x * t;
  }
  const double determinant = sum_w * sum_wxx - sum_wx * sum_wx;
  double latency = (sum_wt * sum_wxx - sum_wx * sum_wxt) / determinant;
  double seconds_per_byte = (sum_w * sum_wxt - sum_wx * sum_wt) / determinant;
  if (latency < 0) {  // a negative latency means nothing physical: fit through the origin
    latency = 0;
    seconds_per_byte = sum_wxt / sum_wxx;
  }
  if (!(seconds_per_byte > 0) || !std::isfinite(seconds_per_byte))
    return bad_input("the times do not grow with the message size: no bandwidth to fit");

  LatencyBandwidthFit fit;
  fit.latency_seconds = latency;
  fit.bandwidth_bytes_per_s = 1 / seconds_per_byte;
  fit.points = static_cast<int>(points.size());
  std::vector<double> errors;
  for (const TimedMessage& point : points)
    errors.push_back(std::abs(fit.predict_seconds(point.bytes) - point.seconds) / point.seconds);
  fit.median_relative_error = probe::summarize(errors).median_seconds;  // probe::summarize is unit-agnostic
  fit.max_relative_error = *std::max_element(errors.begin(), errors.end());
  return fit;
}

Expected<TwoRegimeFit> fit_two_regimes(const std::vector<TimedMessage>& points) {
  std::set<std::int64_t> size_set;
  for (const TimedMessage& point : points) size_set.insert(point.bytes);
  const std::vector<std::int64_t> sizes(size_set.begin(), size_set.end());
  constexpr std::size_t least_sizes_per_regime = 3;
  if (sizes.size() < 2 * least_sizes_per_regime)
    return bad_input("fitting two regimes needs at least six message sizes");

  std::optional<TwoRegimeFit> best;
  double best_error = 0;
  for (std::size_t split = least_sizes_per_regime; split + least_sizes_per_regime <= sizes.size(); ++split) {
    std::vector<TimedMessage> below, above;
    for (const TimedMessage& point : points) (point.bytes < sizes[split] ? below : above).push_back(point);
    const auto small = fit_latency_bandwidth(below);
    const auto large = fit_latency_bandwidth(above);
    if (!small || !large) continue;
    TwoRegimeFit candidate{sizes[split], *small, *large};
    double error = 0;  // the sum of squared relative errors over both regimes
    for (const TimedMessage& point : points) {
      const double relative = (candidate.predict_seconds(point.bytes) - point.seconds) / point.seconds;
      error += relative * relative;
    }
    if (!best || error < best_error) {
      best = candidate;
      best_error = error;
    }
  }
  if (!best) return bad_input("the times do not grow with the message size in either regime: no bandwidth to fit");
  return *best;
}

}  // namespace dnntune::train::comm
