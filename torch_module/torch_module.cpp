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
// in the Python module), the module's folder from the installed Python package's, then where this
// build put it, then the configured install location.
std::vector<std::string> candidate_paths() {
  std::vector<std::string> paths;
  const auto add = [&paths](const std::string& path) {
    if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  };
  // `object`'s folder joined with `relative` and the module's name, when `object` resolves.
  const auto add_from = [&add](const std::string& object, const fs::path& relative) {
    std::error_code error;
    const fs::path resolved = fs::canonical(object, error);
    if (!error) add((resolved.parent_path() / relative / DNNTUNE_TORCH_MODULE_NAME).lexically_normal().string());
  };
  const fs::path beside = fs::path("..") / "lib" / "dnntune";
  const auto program = self_executable_path();
  if (program) add_from(*program, beside);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&candidate_paths), &info) && info.dli_fname &&
      std::string(info.dli_fname).find('/') != std::string::npos) {
    add_from(info.dli_fname, beside);
#ifdef DNNTUNE_TORCH_MODULE_FROM_PACKAGE
    // A shared object (the Python module) as `cmake --install` lays its package out under whatever
    // prefix it was given (python/CMakeLists.txt).
    std::error_code error;
    if (!program || !fs::equivalent(*program, info.dli_fname, error))
      add_from(info.dli_fname, DNNTUNE_TORCH_MODULE_FROM_PACKAGE);
#endif
  }
  add(DNNTUNE_TORCH_MODULE_BUILT);
  add(DNNTUNE_TORCH_MODULE_INSTALLED);
  return paths;
}

// The module loaded, and where from.
struct LoadedModule {
  void* handle = nullptr;
  std::string path;
};

Expected<LoadedModule> load_module() {
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
    return LoadedModule{handle, path};
  }
  return failure(
      "cannot load dnntune's libtorch module, which trains and times layers with libtorch (looked "
      "in " +
      tried +
      "): build it (`cmake --build build --target dnntune_torch`) or install dnntune "
      "again");
}

// Loaded once per process (thread-safe).
const Expected<LoadedModule>& loaded_module() {
  static const Expected<LoadedModule> module = load_module();
  return module;
}

}  // namespace

Expected<void*> entry_point(const char* name) {
  const auto& module = loaded_module();
  if (!module) return module.error();
  void* found = dlsym(module->handle, name);
  if (!found) return failure(std::string("dnntune's libtorch module has no entry point ") + name);
  return found;
}

Expected<std::string> module_path() {
  const auto& module = loaded_module();
  if (!module) return module.error();
  return module->path;
}

}  // namespace dnntune::torch_module
