// tests/probe_memory_budget_test.cpp — buffers sized from a reported cache are capped by what
// the machine can spare: the rule on recorded /proc/meminfo and cgroup texts, and this machine.
#include <catch2/catch.hpp>

#include "probe/memory_budget.hpp"

using namespace dnntune::probe;

namespace {
const char* meminfo_24_gib_available =
    "MemTotal:       24576000 kB\nMemFree:        20000000 kB\nMemAvailable:   24000000 kB\nBuffers: 1 kB\n";
}

TEST_CASE("spare memory is MemAvailable, bounded by the cgroup's free allowance") {
  CHECK(spare_memory_bytes_from(meminfo_24_gib_available, "", "") == 24000000ull * 1024);
  // cgroup v2 "max" and v1's huge "no limit" bound nothing.
  CHECK(spare_memory_bytes_from(meminfo_24_gib_available, "max\n", "1000\n") == 24000000ull * 1024);
  CHECK(spare_memory_bytes_from(meminfo_24_gib_available, "9223372036854771712\n", "2957475840\n") ==
        24000000ull * 1024);
  // A 2 GiB container with 512 MiB in use: 1.5 GiB.
  CHECK(spare_memory_bytes_from(meminfo_24_gib_available, "2147483648\n", "536870912\n") == 1610612736ull);
  CHECK(spare_memory_bytes_from(meminfo_24_gib_available, "100\n", "200\n") == 0u);
  CHECK_FALSE(spare_memory_bytes_from("garbage", "", "").has_value());
}

TEST_CASE("a buffer sized from an absurd cache is capped, a sane one is not") {
  // 4 x (2 x 508 MB) of reported L3 wanted; whatever this machine has, never over the ceiling.
  const std::uint64_t wanted = 4ull * 2 * 508 * 1000 * 1000;
  const std::uint64_t bounded = bounded_buffer_bytes(wanted, 0.25 / 3, 64ull << 20, 512ull << 20);
  CHECK(bounded <= (512ull << 20));
  CHECK(bounded >= (64ull << 20));
  CHECK(bounded_buffer_bytes(100ull << 20, 0.25 / 3, 64ull << 20, 512ull << 20) <= (100ull << 20));
  CHECK(bounded_buffer_bytes(1, 0.25, 64ull << 20, 512ull << 20) == (64ull << 20));
  REQUIRE(spare_memory_bytes().has_value());  // Linux: /proc/meminfo is always there
  CHECK(*spare_memory_bytes() > 0u);
}
