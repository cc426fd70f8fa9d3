// probe/allocators.hpp — the memory allocators this machine can give a training process, and
// what the first touch of a fresh page costs here: the two facts behind the allocator as a
// tuning dimension. Where a fresh 4 KiB page costs microseconds to fault in (virtual machines),
// an allocator that hands memory back to the kernel and maps it again every step (glibc's
// defaults for blocks above its mmap threshold) can make training much slower than one that
// keeps it (docs/results.md, "The allocator").
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/expected.hpp"
#include "records/machine_profile.hpp"
#include "probe/peak_kernels.hpp"

namespace dnntune::probe {

struct AllocatorVariant {
  std::string name;  // "default", "glibc-tuned", "jemalloc", "tcmalloc"
  std::string description;
  std::vector<std::pair<std::string, std::string>> environment;  // what every rank sets to load it
};

// The variants that can run here: glibc's default and glibc with thresholds that keep freed
// memory always; jemalloc and tcmalloc when their libraries are installed (LD_PRELOAD).
std::vector<AllocatorVariant> installed_allocators();

// The variant named `name`, or bad_input naming the installed ones and how to install a missing one.
Expected<AllocatorVariant> allocator_variant(const std::string& name);

// The allocator this process was started under: `dnntune train|calibrate --allocator NAME` sets
// its environment and DNNTUNE_ALLOCATOR=NAME and starts itself again; its children (a
// calibration's workers) inherit both. "default" when none was chosen.
constexpr const char* applied_allocator_variable = "DNNTUNE_ALLOCATOR";
std::string allocator_of_this_process();

// Whether this process has a library whose path contains `name` mapped (/proc/self/maps): how
// a preloaded allocator, or the OpenMP runtime a framework linked, is seen to be there.
bool this_process_maps(const std::string& name);

// Nanoseconds to fault in one fresh 4 KiB page (a write to each page of a new anonymous mapping),
// with one thread, and with every usable core touching its own share; and with transparent huge
// pages asked for (madvise) when the kernel offers them. Median of repetitions; the mapping is
// at most 64 MiB (16384 pages: the cost is per page, and a larger mapping only lengthens the probe,
// whose seconds a first run's budget pays) and a share of the spare memory.
struct FirstTouchCosts {
  records::Figure one_thread;
  records::Figure all_cores;                  // ns per page per thread, every core faulting at once
  std::optional<records::Figure> huge_pages;  // one thread, MADV_HUGEPAGE; absent when THP is off
};
FirstTouchCosts measure_first_touch(const std::vector<int>& cpus, const PeakOptions& options);

}  // namespace dnntune::probe
