// probe/memory_budget.hpp — how much memory a probe or calibration buffer may take. Caches that a
// hypervisor reports can be absurd (hundreds of MB of L3: STREAM arrays sized at 4x that can
// exceed the machine's memory, and the kernel's OOM killer ends the run), so every buffer sized from a
// cache is also capped by what the machine can spare: MemAvailable and the cgroup's limit less
// its usage, whichever is smaller.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dnntune::probe {

// Bytes this process can allocate without pushing the machine into reclaim or the OOM killer:
// the smaller of /proc/meminfo's MemAvailable and the cgroup's free allowance (v2 memory.max -
// memory.current, or v1 limit_in_bytes - usage_in_bytes). Empty when neither can be read.
std::optional<std::uint64_t> spare_memory_bytes();

// The same from given file contents (a /proc/meminfo text, the cgroup's limit and usage texts,
// empty when absent): the rule above, testable on recorded inputs.
std::optional<std::uint64_t> spare_memory_bytes_from(const std::string& meminfo, const std::string& cgroup_limit,
                                                     const std::string& cgroup_usage);

// `wanted` bytes, at most `share` of the spare memory and at most `ceiling`, at least `floor`.
// With the spare memory unknown, `ceiling` bounds it alone.
std::uint64_t bounded_buffer_bytes(std::uint64_t wanted, double share, std::uint64_t floor, std::uint64_t ceiling);

}  // namespace dnntune::probe
