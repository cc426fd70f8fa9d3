// tests/train_comm_fit_test.cpp — the latency + size / bandwidth fit of communication times,
// and the message sizes a sweep times.
#include <catch2/catch.hpp>

#include "train/comm/comm_sweep.hpp"
#include "train/comm/latency_bandwidth_fit.hpp"

using dnntune::train::comm::fit_latency_bandwidth;
using dnntune::train::comm::fit_two_regimes;
using dnntune::train::comm::sweep_message_sizes;
using dnntune::train::comm::TimedMessage;

TEST_CASE("an exact Hockney line is recovered from bytes to hundreds of MB") {
  const double latency = 2e-6, bandwidth = 5e9;
  std::vector<TimedMessage> points;
  for (std::int64_t bytes = 4; bytes <= (std::int64_t{256} << 20); bytes *= 4)
    points.push_back({bytes, latency + static_cast<double>(bytes) / bandwidth});
  const auto fit = fit_latency_bandwidth(points);
  REQUIRE(fit);
  CHECK(fit->latency_seconds == Approx(latency).epsilon(1e-6));
  CHECK(fit->bandwidth_bytes_per_s == Approx(bandwidth).epsilon(1e-6));
  CHECK(fit->max_relative_error < 1e-6);
  CHECK(fit->points == static_cast<int>(points.size()));
}

TEST_CASE("relative errors weigh small messages like large ones") {
  // 10% noise on the small messages must not swamp the latency estimate.
  const std::vector<TimedMessage> points{
      {4, 1.1e-6}, {64, 0.9e-6}, {1 << 20, 1e-6 + (1 << 20) / 1e10}, {1 << 26, 1e-6 + (1 << 26) / 1e10}};
  const auto fit = fit_latency_bandwidth(points);
  REQUIRE(fit);
  CHECK(fit->latency_seconds == Approx(1e-6).epsilon(0.15));
  CHECK(fit->bandwidth_bytes_per_s == Approx(1e10).epsilon(0.1));
}

TEST_CASE("a latency below zero is clamped, and unusable points are refused") {
  const auto through_origin = fit_latency_bandwidth({{1000, 1e-6}, {2000, 2.2e-6}});
  REQUIRE(through_origin);
  CHECK(through_origin->latency_seconds == 0);
  CHECK_FALSE(fit_latency_bandwidth({{1000, 1e-6}}));
  CHECK_FALSE(fit_latency_bandwidth({{1000, 1e-6}, {1000, 2e-6}}));
  CHECK_FALSE(fit_latency_bandwidth({{1000, 2e-6}, {2000, 1e-6}}));
  CHECK_FALSE(fit_latency_bandwidth({{1000, 0}, {2000, 1e-6}}));
}

TEST_CASE("two regimes split where the bandwidth changes") {
  // In cache: 1 us + bytes / 10 GB/s up to 1 MiB; from memory: 50 us + bytes / 2 GB/s.
  std::vector<TimedMessage> points;
  for (std::int64_t bytes = 4; bytes <= (std::int64_t{256} << 20); bytes *= 4)
    points.push_back({bytes, bytes < (1 << 22) ? 1e-6 + static_cast<double>(bytes) / 1e10
                                               : 50e-6 + static_cast<double>(bytes) / 2e9});
  const auto fit = fit_two_regimes(points);
  REQUIRE(fit);
  CHECK(fit->breakpoint_bytes == (1 << 22));
  CHECK(fit->small.bandwidth_bytes_per_s == Approx(1e10).epsilon(1e-6));
  CHECK(fit->large.bandwidth_bytes_per_s == Approx(2e9).epsilon(1e-6));
  CHECK(fit->large.latency_seconds == Approx(50e-6).epsilon(1e-4));
  CHECK(fit->predict_seconds(1 << 28) == Approx(50e-6 + (1 << 28) / 2e9));
  CHECK_FALSE(fit_two_regimes({{4, 1e-6}, {16, 2e-6}, {64, 3e-6}, {256, 4e-6}, {1024, 5e-6}}));
}

TEST_CASE("a sweep times 4 bytes, then four times more, up to the largest message") {
  CHECK(sweep_message_sizes(1024) == std::vector<std::int64_t>{4, 16, 64, 256, 1024});
  CHECK(sweep_message_sizes(1000) == std::vector<std::int64_t>{4, 16, 64, 256, 1000});
  const auto full = sweep_message_sizes(std::int64_t{256} << 20);
  CHECK(full.size() == 14);
  CHECK(full.back() == (std::int64_t{256} << 20));
}
