// train/comm/latency_bandwidth_fit.hpp — the Hockney model of a communication operation,
// time(bytes) = latency + bytes / bandwidth, fitted to measured (message size, time) points.
// Sizes span bytes to hundreds of MB, so the fit minimises the squared *relative* error (each
// point counts alike, not just the largest messages); the latency is kept non-negative. Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "common/expected.hpp"

namespace dnntune::train::comm {

struct TimedMessage {
  std::int64_t bytes = 0;
  double seconds = 0;
};

struct LatencyBandwidthFit {
  double latency_seconds = 0;        // alpha
  double bandwidth_bytes_per_s = 0;  // 1 / beta: message bytes per second of the operation
  double median_relative_error = 0;  // |fit - measured| / measured over the points
  double max_relative_error = 0;
  int points = 0;

  double predict_seconds(std::int64_t bytes) const {
    return latency_seconds + static_cast<double>(bytes) / bandwidth_bytes_per_s;
  }
};

// Needs at least two distinct sizes with positive times, and times that grow with size.
Expected<LatencyBandwidthFit> fit_latency_bandwidth(const std::vector<TimedMessage>& points);

// One line rarely holds from bytes to hundreds of MB: small messages go at the latency of the
// eager protocol out of cache, large ones at the bandwidth of memory or of the network. Two
// lines, split at the measured size that fits best (each side keeps at least three sizes).
struct TwoRegimeFit {
  std::int64_t breakpoint_bytes = 0;  // `large` from here on
  LatencyBandwidthFit small;
  LatencyBandwidthFit large;

  double predict_seconds(std::int64_t bytes) const {
    return bytes < breakpoint_bytes ? small.predict_seconds(bytes) : large.predict_seconds(bytes);
  }
};

// Needs at least six distinct sizes.
Expected<TwoRegimeFit> fit_two_regimes(const std::vector<TimedMessage>& points);

}  // namespace dnntune::train::comm
