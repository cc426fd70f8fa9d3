// pipeline/installed_allocators.cpp — see installed_allocators.hpp.
#include "pipeline/installed_allocators.hpp"

#include "probe/allocators.hpp"

namespace dnntune::pipeline {

std::vector<tuner::InstalledAllocator> installed_allocators() {
  std::vector<tuner::InstalledAllocator> installed;
  for (const auto& variant : probe::installed_allocators()) installed.push_back({variant.name, variant.environment});
  return installed;
}

}  // namespace dnntune::pipeline
