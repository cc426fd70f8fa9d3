// torch_module/torch_module.hpp — the loader of the libtorch module: the code that calls libtorch
// (the trainer's step loop, train/'s torch files; the torch layer backend, calibrate/torch_backend.cpp)
// is built as a shared module, libdnntune_torch.so (torch_plugin/), loaded on the first call that
// needs it (train::train, calibrate::make_torch_backend, calibrate::torch_cuda_available). A program linked to libtorch
// spends most of a second loading it before main (its operator registrations and relocations:
// docs/results.md, "Test suite time"); the commands that never train or time a kernel (predict,
// recommend from the cache, probe, models, fit ...) now start without it.
//
// The module is looked for in lib/dnntune/ beside the directory of the program (or of the shared
// object, such as the Python module) that loads it, which is where the build puts it (build/lib/
// dnntune/ for build/cli/dnntune) and where `cmake --install` puts it (lib/dnntune/ beside bin/);
// from the Python module, where `cmake --install` puts it relative to the installed package, under
// any prefix; then where this build put it, then in the installed location this build was
// configured for.
#pragma once

#include <string>

#include "common/expected.hpp"

namespace dnntune::torch_module {

// The module's entry point `name` (an extern "C" function of torch_plugin/entry_points.cpp), the
// module loaded on the first call; a failure that names each place looked in when it cannot be
// loaded, or when it was built by another version of dnntune.
Expected<void*> entry_point(const char* name);

// The file the module was loaded from (loaded on the first call), or why it cannot be: which of
// the places above answers (the installed Python package's test asks it).
Expected<std::string> module_path();

// entry_point() as a function of type Signature.
template <typename Signature>
Expected<Signature*> entry(const char* name) {
  auto found = entry_point(name);
  if (!found) return found.error();
  return reinterpret_cast<Signature*>(*found);
}

}  // namespace dnntune::torch_module
