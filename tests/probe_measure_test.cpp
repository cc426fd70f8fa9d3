// tests/probe_measure_test.cpp — the timing statistics on hand-computed cases, the sampling of
// core counts, and the measurement kernels running for real on this machine (checked for
// sanity, never for speed: timings on a shared machine are benchmark figures, not assertions).
#include <catch2/catch.hpp>

#include "probe/peak_kernels.hpp"
#include "probe/pinned_team.hpp"
#include "probe/timing.hpp"
#include "probe/topology.hpp"

using namespace dnntune;

TEST_CASE("summary statistics") {
  const auto summary = probe::summarize({4.0, 1.0, 3.0, 2.0});
  CHECK(summary.repetitions == 4);
  CHECK(summary.median_seconds == Approx(2.5));
  CHECK(summary.mean_seconds == Approx(2.5));
  CHECK(summary.min_seconds == 1.0);
  CHECK(summary.max_seconds == 4.0);
  // sample stddev of 1,2,3,4 = sqrt(5/3); cv = that / 2.5
  CHECK(summary.coefficient_of_variation == Approx(std::sqrt(5.0 / 3.0) / 2.5));
  CHECK(probe::summarize({7.0}).coefficient_of_variation == 0);
  CHECK(probe::summarize({}).repetitions == 0);
}

TEST_CASE("time_repeatedly honours its repetition bounds") {
  int calls = 0;
  probe::TimingOptions options;
  options.warmup_runs = 2;
  options.min_repetitions = 3;
  options.max_repetitions = 4;
  options.min_total_seconds = 100;  // never reached: max_repetitions stops it
  const auto summary = probe::time_repeatedly(
      [&] {
        ++calls;
        return 0.5;
      },
      options);
  CHECK(summary.repetitions == 4);
  CHECK(calls == 6);
  CHECK(summary.median_seconds == 0.5);
}

TEST_CASE("core counts sampled for scaling curves") {
  CHECK(probe::core_counts_to_measure(1) == std::vector<int>{1});
  CHECK(probe::core_counts_to_measure(2) == std::vector<int>{1, 2});
  CHECK(probe::core_counts_to_measure(56) == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 56});
  CHECK(probe::core_counts_to_measure(64) == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64});
}

TEST_CASE("a pinned team runs every thread on its CPU") {
  const auto profile = probe::describe_this_machine();
  REQUIRE(profile);
  const auto& allowed = profile->binding->allowed_pus;
  probe::PinnedTeam team(allowed);
  std::vector<int> seen(allowed.size(), -1);
  team.run([&](int thread) { seen[thread] = sched_getcpu(); });
  CHECK(team.all_pinned());
  CHECK(seen == allowed);
}

TEST_CASE("the kernels measure something on this machine") {
  const auto profile = probe::describe_this_machine();
  REQUIRE(profile);
  const int cpu = profile->binding->allowed_pus.front();
  probe::PeakOptions options;
  options.seconds_per_repetition = 0.005;
  options.repetitions = 3;
  const auto fma = probe::measure_fma({cpu}, 1, false, options);
  CHECK(fma.median > 0.5);  // GFLOP/s: even an old scalar core does more
  CHECK(fma.repetitions == 3);
  const auto triad = probe::measure_triad({cpu}, 1, 8 << 20, options);
  CHECK(triad.median > 0.1);  // GB/s
  const auto gemm = probe::measure_onednn_sgemm_one_core(cpu, options);
  CHECK(gemm.provenance == records::Provenance::measured);
  CHECK(gemm.value > 0.5);
}
