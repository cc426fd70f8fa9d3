// pipeline/installed_allocators.cpp — see installed_allocators.hpp.
#include "pipeline/installed_allocators.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "probe/allocators.hpp"

namespace dnntune::pipeline {

std::vector<tuner::InstalledAllocator> installed_allocators() {
  std::vector<tuner::InstalledAllocator> installed;
  for (const auto& variant : probe::installed_allocators()) installed.push_back({variant.name, variant.environment});
  return installed;
}

Expected<void> run_under_allocator(const std::string& name) {
  if (name == "default") return {};
  const auto variant = probe::allocator_variant(name);
  if (!variant) return variant.error();
  if (probe::allocator_of_this_process() == name) {
    for (const auto& [variable, value] : variant->environment)
      if (variable == "LD_PRELOAD" && !probe::this_process_maps(value))
        return failure("allocator " + name + ": " + value + " is not loaded although LD_PRELOAD names it");
    return {};
  }
  for (const auto& [variable, value] : variant->environment) setenv(variable.c_str(), value.c_str(), 1);
  setenv(probe::applied_allocator_variable, name.c_str(), 1);
  std::ifstream cmdline("/proc/self/cmdline");
  std::vector<std::string> words;
  for (std::string word; std::getline(cmdline, word, '\0');) words.push_back(word);
  std::vector<char*> arguments;
  for (std::string& word : words) arguments.push_back(word.data());
  arguments.push_back(nullptr);
  execv("/proc/self/exe", arguments.data());
  return failure("allocator " + name + ": cannot start this process again under it (" + std::strerror(errno) + ")");
}

}  // namespace dnntune::pipeline
