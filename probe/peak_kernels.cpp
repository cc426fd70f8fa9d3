// probe/peak_kernels.cpp — see peak_kernels.hpp.
#include "probe/peak_kernels.hpp"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <set>

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include "probe/allocators.hpp"
#include "probe/memory_budget.hpp"
#include "probe/pinned_team.hpp"
#include "probe/timing.hpp"

namespace dnntune::probe {
namespace {

// --- FMA loops: independent accumulator chains, x = x * m + a converges to a fixed point so
// values stay normal (denormals would slow the loop down and lie about the peak).

constexpr int avx512_chains = 24;
constexpr int avx2_chains = 12;
constexpr int sse_chains = 12;

__attribute__((target("avx512f"))) float fma_loop_avx512(long iterations) {
  __m512 chains[avx512_chains];
  for (int chain = 0; chain < avx512_chains; ++chain) chains[chain] = _mm512_set1_ps(0.001f * chain);
  const __m512 multiplier = _mm512_set1_ps(0.9999f), addend = _mm512_set1_ps(1e-6f);
  for (long iteration = 0; iteration < iterations; ++iteration) {
#pragma GCC unroll 24
    for (int chain = 0; chain < avx512_chains; ++chain)
      chains[chain] = _mm512_fmadd_ps(chains[chain], multiplier, addend);
  }
  __m512 sum = chains[0];
  for (int chain = 1; chain < avx512_chains; ++chain) sum = _mm512_add_ps(sum, chains[chain]);
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

__attribute__((target("avx2,fma"))) float fma_loop_avx2(long iterations) {
  __m256 chains[avx2_chains];
  for (int chain = 0; chain < avx2_chains; ++chain) chains[chain] = _mm256_set1_ps(0.001f * chain);
  const __m256 multiplier = _mm256_set1_ps(0.9999f), addend = _mm256_set1_ps(1e-6f);
  for (long iteration = 0; iteration < iterations; ++iteration) {
#pragma GCC unroll 12
    for (int chain = 0; chain < avx2_chains; ++chain)
      chains[chain] = _mm256_fmadd_ps(chains[chain], multiplier, addend);
  }
  __m256 sum = chains[0];
  for (int chain = 1; chain < avx2_chains; ++chain) sum = _mm256_add_ps(sum, chains[chain]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

float multiply_add_loop_sse(long iterations) {
  __m128 chains[sse_chains];
  for (int chain = 0; chain < sse_chains; ++chain) chains[chain] = _mm_set1_ps(0.001f * chain);
  const __m128 multiplier = _mm_set1_ps(0.9999f), addend = _mm_set1_ps(1e-6f);
  for (long iteration = 0; iteration < iterations; ++iteration) {
#pragma GCC unroll 12
    for (int chain = 0; chain < sse_chains; ++chain)
      chains[chain] = _mm_add_ps(_mm_mul_ps(chains[chain], multiplier), addend);
  }
  __m128 sum = chains[0];
  for (int chain = 1; chain < sse_chains; ++chain) sum = _mm_add_ps(sum, chains[chain]);
  float lanes[4];
  _mm_storeu_ps(lanes, sum);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

struct FmaLoop {
  float (*run)(long iterations);
  double flops_per_iteration;
};

FmaLoop best_fma_loop() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {fma_loop_avx512, avx512_chains * 16 * 2.0};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {fma_loop_avx2, avx2_chains * 8 * 2.0};
  return {multiply_add_loop_sse, sse_chains * 4 * 2.0};
}

// Keeps results alive so the compiler cannot drop the loops.
std::atomic<float> result_sink{0};

records::ScalingPoint to_point(const TimingSummary& timing, double work_per_repetition, int cores, int threads,
                               bool smt) {
  records::ScalingPoint point;
  point.cores = cores;
  point.threads = threads;
  point.smt = smt;
  point.median = work_per_repetition / timing.median_seconds / 1e9;
  point.coefficient_of_variation = timing.coefficient_of_variation;
  point.repetitions = timing.repetitions;
  return point;
}

TimingOptions timing_options(const PeakOptions& options) {
  TimingOptions timing;
  timing.min_repetitions = options.repetitions;
  timing.max_repetitions = options.repetitions;
  timing.min_total_seconds = 0;
  return timing;
}

void report(const PeakOptions& options, const std::string& line) {
  if (options.progress) options.progress(line);
}

}  // namespace

std::string fma_vector_isa() {
  const FmaLoop loop = best_fma_loop();
  return loop.run == fma_loop_avx512 ? "avx512" : loop.run == fma_loop_avx2 ? "avx2" : "sse";
}

records::ScalingPoint measure_fma(const std::vector<int>& cpus, int cores, bool smt, const PeakOptions& options) {
  const FmaLoop loop = best_fma_loop();
  PinnedTeam team(cpus);
  // Calibrate the iteration count on the team itself, so each repetition lasts about
  // seconds_per_repetition whatever the clock and the SMT sharing.
  long iterations = 1 << 16;
  for (;;) {
    const double seconds = team.run([&](int) { result_sink = result_sink + loop.run(iterations); });
    if (seconds >= options.seconds_per_repetition / 4 || iterations > (1L << 40)) {
      iterations = std::max(1L, static_cast<long>(iterations * options.seconds_per_repetition / seconds));
      break;
    }
    iterations *= 4;
  }
  const auto timing =
      time_repeatedly([&] { return team.run([&](int) { result_sink = result_sink + loop.run(iterations); }); },
                      timing_options(options));
  const double flops = loop.flops_per_iteration * static_cast<double>(iterations) * team.size();
  return to_point(timing, flops, cores, team.size(), smt);
}

records::ScalingPoint measure_triad(const std::vector<int>& cpus, int cores, std::size_t bytes_per_array,
                                    const PeakOptions& options) {
  PinnedTeam team(cpus);
  const std::size_t elements = bytes_per_array / sizeof(double);
  const std::size_t per_thread = elements / cpus.size();
  // Uninitialised allocations: each thread touches its own slice first, so its pages land on
  // its own NUMA node as they would for a process pinned there.
  std::unique_ptr<double[]> a(new double[elements]), b(new double[elements]), c(new double[elements]);
  team.run([&](int thread) {
    const std::size_t begin = thread * per_thread, end = begin + per_thread;
    for (std::size_t i = begin; i < end; ++i) a[i] = 0, b[i] = 1.0, c[i] = 2.0;
  });
  const double scalar = 3.0;
  auto triad = [&](int thread) {
    double* __restrict out = a.get() + thread * per_thread;
    const double* __restrict left = b.get() + thread * per_thread;
    const double* __restrict right = c.get() + thread * per_thread;
    for (std::size_t i = 0; i < per_thread; ++i) out[i] = left[i] + scalar * right[i];
  };
  const auto timing = time_repeatedly([&] { return team.run(triad); }, timing_options(options));
  result_sink = result_sink + static_cast<float>(a[elements / 2]);
  const double bytes = 3.0 * sizeof(double) * static_cast<double>(per_thread * cpus.size());
  return to_point(timing, bytes, cores, team.size(), false);
}

records::Figure measure_onednn_sgemm_one_core(int cpu, const PeakOptions& options) {
  constexpr dnnl_dim_t size = 1536;
  std::vector<float> a(size * size, 0.5f), b(size * size, 0.25f), c(size * size, 0.0f);
  PinnedTeam team({cpu});
  dnnl_status_t status = dnnl_success;
  auto gemm = [&](int) {
    omp_set_num_threads(1);  // per-thread OpenMP setting: this call alone runs on one thread
    status = dnnl_sgemm('N', 'N', size, size, size, 1.0f, a.data(), size, b.data(), size, 0.0f, c.data(), size);
  };
  const auto timing = time_repeatedly([&] { return team.run(gemm); }, timing_options(options));
  records::Figure figure;
  figure.provenance = records::Provenance::measured;
  figure.value = status == dnnl_success ? 2.0 * size * size * size / timing.median_seconds / 1e9 : 0;
  figure.coefficient_of_variation = timing.coefficient_of_variation;
  figure.repetitions = timing.repetitions;
  figure.note = status == dnnl_success ? "oneDNN sgemm 1536^3, 1 thread" : "oneDNN sgemm failed";
  return figure;
}

std::vector<int> core_counts_to_measure(int cores) {
  std::vector<int> counts;
  for (int count = 1; count <= std::min(cores, 8); ++count) counts.push_back(count);
  for (int count = 16; count < cores; count *= 2) counts.push_back(count);
  if (counts.empty() || counts.back() != cores) counts.push_back(cores);
  return counts;
}

Expected<void> measure_node_performance(records::MachineProfile& profile, const PeakOptions& options) {
  if (!profile.binding) return bad_input("measurements need a profile of this machine (probe it first)");
  // The cores this process may use, each with its allowed PUs, in topology order.
  const std::set<int> allowed(profile.binding->allowed_pus.begin(), profile.binding->allowed_pus.end());
  std::vector<std::vector<int>> usable_cores;
  int cores_on_first_package = 0;
  for (const records::Core& core : profile.topology.core_list) {
    std::vector<int> pus;
    for (int pu : core.pus)
      if (allowed.count(pu)) pus.push_back(pu);
    if (pus.empty()) continue;
    if (core.package == profile.topology.core_list.front().package) ++cores_on_first_package;
    usable_cores.push_back(std::move(pus));
  }
  if (usable_cores.empty()) return failure("this process may run on no CPU of the topology");
  const bool smt_available =
      std::any_of(usable_cores.begin(), usable_cores.end(), [](const auto& pus) { return pus.size() > 1; });

  records::Performance& performance = profile.performance;
  performance = records::Performance{};
  performance.fma_vector_isa = fma_vector_isa();
  const auto counts = core_counts_to_measure(static_cast<int>(usable_cores.size()));
  for (int count : counts) {
    std::vector<int> one_per_core, all_siblings;
    for (int core = 0; core < count; ++core) {
      one_per_core.push_back(usable_cores[core].front());
      all_siblings.insert(all_siblings.end(), usable_cores[core].begin(), usable_cores[core].end());
    }
    report(options, "fma " + std::to_string(count) + " core(s)");
    performance.fma_scaling.push_back(measure_fma(one_per_core, count, false, options));
    if (smt_available) {
      report(options, "fma " + std::to_string(count) + " core(s) with SMT siblings");
      performance.fma_scaling.push_back(measure_fma(all_siblings, count, true, options));
    }
  }
  const records::ScalingPoint& one_core = performance.fma_scaling.front();
  performance.peak_fp32_gflops_per_core =
      records::Figure{one_core.median, records::Provenance::measured, one_core.coefficient_of_variation,
                      one_core.repetitions, performance.fma_vector_isa + " FMA loop, 1 thread"};

  // Arrays of 4x the last-level cache (all instances), so the triad streams memory — but the
  // reported cache is only a hint (a hypervisor may report hundreds of MB): the three arrays take at
  // most a quarter of the spare memory and 1.5 GiB, and at least 64 MiB each.
  std::uint64_t last_level_cache_bytes = 0;
  for (const records::CacheLevel& cache : profile.topology.caches)
    if (cache.type != "instruction") last_level_cache_bytes = cache.size_bytes * cache.instances;
  const std::size_t bytes_per_array =
      bounded_buffer_bytes(4 * last_level_cache_bytes, 0.25 / 3, 64ull << 20, 512ull << 20);
  for (int count : counts) {
    std::vector<int> one_per_core;
    for (int core = 0; core < count; ++core) one_per_core.push_back(usable_cores[core].front());
    report(options, "triad " + std::to_string(count) + " core(s)");
    performance.triad_scaling.push_back(measure_triad(one_per_core, count, bytes_per_array, options));
  }
  const records::ScalingPoint* best_on_one_package = nullptr;
  for (const records::ScalingPoint& point : performance.triad_scaling)
    if (point.cores <= cores_on_first_package && (!best_on_one_package || point.median > best_on_one_package->median))
      best_on_one_package = &point;
  if (best_on_one_package)
    performance.memory_bandwidth_gbs_per_package =
        records::Figure{best_on_one_package->median, records::Provenance::measured,
                        best_on_one_package->coefficient_of_variation, best_on_one_package->repetitions,
                        "best STREAM triad on one package (" + std::to_string(best_on_one_package->cores) + " cores)"};

  report(options, "oneDNN sgemm on 1 core");
  performance.gemm_gflops_one_core = measure_onednn_sgemm_one_core(usable_cores.front().front(), options);

  report(options, "first touch of fresh pages");
  std::vector<int> one_per_core;
  for (const auto& core : usable_cores) one_per_core.push_back(core.front());
  const FirstTouchCosts touch = measure_first_touch(one_per_core, options);
  performance.first_touch_ns_per_page = touch.one_thread;
  performance.first_touch_ns_per_page_all_cores = touch.all_cores;
  performance.first_touch_ns_per_page_huge = touch.huge_pages;
  return {};
}

}  // namespace dnntune::probe
