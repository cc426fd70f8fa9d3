// probe/allocators.cpp — see allocators.hpp.
#include "probe/allocators.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "probe/memory_budget.hpp"
#include "probe/pinned_team.hpp"
#include "probe/timing.hpp"
#include "records/measurement.hpp"

namespace dnntune::probe {
namespace {

// The first of `names` in the library directories Debian and most distributions use.
std::string installed_library(std::initializer_list<const char*> names) {
  for (const char* directory : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"})
    for (const char* name : names)
      if (std::filesystem::exists(std::string(directory) + "/" + name)) return std::string(directory) + "/" + name;
  return "";
}

bool transparent_huge_pages_offered() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(in, modes);
  return modes.find("[always]") != std::string::npos || modes.find("[madvise]") != std::string::npos;
}

constexpr std::size_t page_bytes = 4096;

// Seconds for `team` to write one byte into every page of a fresh mapping of `bytes`.
double touch_fresh_mapping(PinnedTeam& team, std::size_t bytes, bool huge) {
  void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) return 0;
  if (huge) madvise(mapping, bytes, MADV_HUGEPAGE);
  auto* base = static_cast<volatile char*>(mapping);
  const std::size_t pages = bytes / page_bytes, share = pages / static_cast<std::size_t>(team.size());
  const double seconds = team.run([&](int thread) {
    for (std::size_t page = thread * share; page < (thread + 1) * share; ++page) base[page * page_bytes] = 1;
  });
  munmap(mapping, bytes);
  return seconds;
}

records::Figure first_touch_figure(PinnedTeam& team, std::size_t bytes, bool huge, const PeakOptions& options,
                                   const std::string& note) {
  TimingOptions timing;
  // At least 256 MiB faulted in before the timed runs: on a VM the first fresh pages a guest hands
  // out after a while fault slower (the host backs them first), which a training's churn does not pay.
  timing.warmup_runs = static_cast<int>(std::max<std::size_t>(1, (256ull << 20) / std::max<std::size_t>(1, bytes)));
  timing.min_repetitions = std::max(3, options.repetitions);
  timing.max_repetitions = timing.min_repetitions;
  const auto summary = time_repeatedly([&] { return touch_fresh_mapping(team, bytes, huge); }, timing);
  const double pages_per_thread = static_cast<double>(bytes / page_bytes) / team.size();
  return records::Figure{1e9 * summary.median_seconds / pages_per_thread, records::Provenance::measured,
                         summary.coefficient_of_variation, summary.repetitions, note};
}

}  // namespace

std::vector<AllocatorVariant> installed_allocators() {
  std::vector<AllocatorVariant> variants = {
      {"default", "glibc malloc with its defaults (blocks above its dynamic mmap threshold are fresh mappings)", {}},
      // Freed memory stays in the heap, never unmapped or trimmed: no fresh pages after step one.
      {records::kReferenceAllocator,
       "glibc malloc keeping freed memory (MALLOC_MMAP_THRESHOLD_ 1 GiB, no trimming)",
       {{"MALLOC_MMAP_THRESHOLD_", "1073741824"}, {"MALLOC_TRIM_THRESHOLD_", "4294967295"}}}};
  // tcmalloc before jemalloc, the order a first run anchors them in: tcmalloc keeps what it frees in
  // its caches, as glibc-tuned does (and Intel's PyTorch launcher preloads it by default), where
  // jemalloc hands dirty pages back to the kernel after its decay time and faults them in again:
  // where faults are dear it can step slower than glibc's defaults and take the variants' time.
  if (const auto tcmalloc = installed_library({"libtcmalloc_minimal.so.4", "libtcmalloc.so.4"}); !tcmalloc.empty())
    variants.push_back({"tcmalloc", "tcmalloc (" + tcmalloc + ")", {{"LD_PRELOAD", tcmalloc}}});
  if (const auto jemalloc = installed_library({"libjemalloc.so.2", "libjemalloc.so"}); !jemalloc.empty())
    variants.push_back({"jemalloc", "jemalloc (" + jemalloc + ")", {{"LD_PRELOAD", jemalloc}}});
  return variants;
}

Expected<AllocatorVariant> allocator_variant(const std::string& name) {
  std::string known;
  for (const AllocatorVariant& variant : installed_allocators()) {
    if (variant.name == name) return variant;
    known += (known.empty() ? "" : ", ") + variant.name;
  }
  if (name == "jemalloc" || name == "tcmalloc")
    return bad_input("allocator " + name + ": not installed on this machine (Debian: apt-get install " +
                     (name == "jemalloc" ? "libjemalloc2" : "libtcmalloc-minimal4") + "); installed: " + known);
  return bad_input("unknown allocator '" + name + "' (installed here: " + known + ")");
}

std::string allocator_of_this_process() {
  const char* applied = std::getenv(applied_allocator_variable);
  return applied && *applied ? applied : "default";
}

bool this_process_maps(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(name) != std::string::npos) return true;
  return false;
}

FirstTouchCosts measure_first_touch(const std::vector<int>& cpus, const PeakOptions& options) {
  const std::size_t bytes =
      bounded_buffer_bytes(64ull << 20, 0.05, 16ull << 20, 64ull << 20) / (2ull << 20) * (2ull << 20);
  PinnedTeam one({cpus.front()}), all(cpus);
  FirstTouchCosts costs;
  costs.one_thread = first_touch_figure(one, bytes, false, options, "a write to each fresh 4 KiB page, 1 thread");
  costs.all_cores = first_touch_figure(all, bytes, false, options,
                                       "each of " + std::to_string(cpus.size()) + " cores faulting its own share");
  if (transparent_huge_pages_offered())
    costs.huge_pages =
        first_touch_figure(one, bytes, true, options, "transparent huge pages (MADV_HUGEPAGE), per 4 KiB, 1 thread");
  return costs;
}

}  // namespace dnntune::probe
