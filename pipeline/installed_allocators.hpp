// pipeline/installed_allocators.hpp — the allocator variants this machine has (the probe's one
// list: probe/allocators.hpp), as the tuner chooses among them (tuner/allocator_choice.hpp).
// Here because the probe and the tuner do not see each other; the commands and the first run's
// anchors both ask it.
#pragma once

#include <vector>

#include "tuner/allocator_choice.hpp"

namespace dnntune::pipeline {

std::vector<tuner::InstalledAllocator> installed_allocators();

}  // namespace dnntune::pipeline
