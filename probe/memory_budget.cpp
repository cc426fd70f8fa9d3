// probe/memory_budget.cpp — see memory_budget.hpp.
#include "probe/memory_budget.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace dnntune::probe {
namespace {

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A cgroup file holding one number of bytes; "max" (no limit) and anything else are empty.
std::optional<std::uint64_t> bytes_in(const std::string& text) {
  std::istringstream in(text);
  unsigned long long value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

}  // namespace

std::optional<std::uint64_t> spare_memory_bytes_from(const std::string& meminfo, const std::string& cgroup_limit,
                                                     const std::string& cgroup_usage) {
  std::optional<std::uint64_t> spare;
  std::istringstream lines(meminfo);
  std::string key;
  unsigned long long kilobytes = 0;
  std::string unit;
  while (lines >> key >> kilobytes >> unit)
    if (key == "MemAvailable:") spare = static_cast<std::uint64_t>(kilobytes) * 1024;
  const auto limit = bytes_in(cgroup_limit), usage = bytes_in(cgroup_usage);
  // cgroup v1 reports "no limit" as a huge page-aligned number: it then bounds nothing.
  if (limit && usage) {
    const std::uint64_t allowance = *limit > *usage ? *limit - *usage : 0;
    spare = spare ? std::min(*spare, allowance) : allowance;
  }
  return spare;
}

std::optional<std::uint64_t> spare_memory_bytes() {
  std::optional<std::uint64_t> spare = spare_memory_bytes_from(file_text("/proc/meminfo"), "", "");
  // The memory cgroups of this process (v1 "N:memory:/path", v2 "0::/path"), each up to the
  // root: the tightest allowance of any of them bounds what this process may take.
  std::istringstream groups(file_text("/proc/self/cgroup"));
  std::string line;
  while (std::getline(groups, line)) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const bool v2 = controllers.empty();
    if (!v2 && controllers.find("memory") == std::string::npos) continue;
    const std::string root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    const std::string limit_name = v2 ? "/memory.max" : "/memory.limit_in_bytes";
    const std::string usage_name = v2 ? "/memory.current" : "/memory.usage_in_bytes";
    for (std::string path = line.substr(second + 1);; path = path.substr(0, path.rfind('/'))) {
      if (const auto allowance =
              spare_memory_bytes_from("", file_text(root + path + limit_name), file_text(root + path + usage_name)))
        spare = spare ? std::min(*spare, *allowance) : *allowance;
      if (path.empty() || path == "/") break;
    }
  }
  return spare;
}

std::uint64_t bounded_buffer_bytes(std::uint64_t wanted, double share, std::uint64_t floor, std::uint64_t ceiling) {
  std::uint64_t bound = ceiling;
  if (const auto spare = spare_memory_bytes())
    bound = std::min<std::uint64_t>(bound, static_cast<std::uint64_t>(share * static_cast<double>(*spare)));
  return std::max(floor, std::min(wanted, bound));
}

}  // namespace dnntune::probe
