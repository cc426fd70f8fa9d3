// common/logical_cpus.hpp — this machine's logical CPUs, as the standard library tells them.
#pragma once

#include <algorithm>
#include <thread>

namespace dnntune {

// At least 1: std::thread::hardware_concurrency() says 0 where it cannot tell.
inline int logical_cpus() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

}  // namespace dnntune
