// torch_module/torch_module.cpp — see torch_module.hpp.
#include "torch_module/torch_module.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "common/self_executable.hpp"

namespace dnntune::torch_module {
namespace {

namespace fs = std::filesystem;

// lib/dnntune/ beside the directory of the program and of the object this code is in (they differ
// in the Python module), then where this build put it, then the configured install location.
std::vector<std::string> candidate_paths() {
  std::vector<std::string> paths;
  const auto add = [&paths](const std::string& path) {
    if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  };
  const auto add_beside = [&add](const std::string& object) {
    std::error_code error;
    const fs::path resolved = fs::canonical(object, error);
    if (!error) add((resolved.parent_path().parent_path() / "lib" / "dnntune" / DNNTUNE_TORCH_MODULE_NAME).string());
  };
  if (auto program = self_executable_path()) add_beside(*program);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&candidate_paths), &info) && info.dli_fname &&
      std::string(info.dli_fname).find('/') != std::string::npos)
    add_beside(info.dli_fname);
  add(DNNTUNE_TORCH_MODULE_BUILT);
  add(DNNTUNE_TORCH_MODULE_INSTALLED);
  return paths;
}

Expected<void*> load_module() {
  std::string tried;
  for (const std::string& path : candidate_paths()) {
    tried += (tried.empty() ? "" : "; ") + path;
    if (!fs::exists(path)) {
      tried += " (absent)";
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      tried += std::string(" (") + (why ? why : "dlopen failed") + ")";
      continue;
    }
    using VersionFunction = const char*();
    auto* version = reinterpret_cast<VersionFunction*>(dlsym(handle, "dnntune_torch_module_version"));
    if (!version || std::string(version()) != DNNTUNE_TORCH_MODULE_VERSION) {
      tried += std::string(" (built by dnntune ") + (version ? version() : "of another kind") + ", this is " +
               DNNTUNE_TORCH_MODULE_VERSION + ")";
      dlclose(handle);
      continue;
    }
    return handle;
  }
  return failure(
      "cannot load dnntune's libtorch module, which trains and times layers with libtorch (looked "
      "in " +
      tried +
      "): build it (`cmake --build build --target dnntune_torch`) or install dnntune "
      "again");
}

}  // namespace

Expected<void*> entry_point(const char* name) {
  static const Expected<void*> module = load_module();  // once per process, thread-safe
  if (!module) return module.error();
  void* found = dlsym(*module, name);
  if (!found) return failure(std::string("dnntune's libtorch module has no entry point ") + name);
  return found;
}

}  // namespace dnntune::torch_module
