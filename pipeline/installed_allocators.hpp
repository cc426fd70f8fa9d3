// pipeline/installed_allocators.hpp — the allocator variants this machine has (the probe's one
// list: probe/allocators.hpp), as the tuner chooses among them (tuner/allocator_choice.hpp), and
// running this process under one of them. Here because the probe and the tuner do not see each
// other; the commands and the first run's anchors both ask it.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"
#include "tuner/allocator_choice.hpp"

namespace dnntune::pipeline {

std::vector<tuner::InstalledAllocator> installed_allocators();

// Runs this process under `name`'s allocator (probe/allocators.hpp; "default" does nothing):
// LD_PRELOAD and glibc's MALLOC_* are read when a process starts, so it sets them and executes
// itself again with the same arguments (before MPI_Init: the same pid, so a launcher's rank stays
// that rank), and does not return. probe::applied_allocator_variable marks the second start,
// which returns at once; the library must then be mapped, or the preload did not take (a failure).
// A bad name is bad input. Call it before anything is probed or written.
Expected<void> run_under_allocator(const std::string& name);

}  // namespace dnntune::pipeline
