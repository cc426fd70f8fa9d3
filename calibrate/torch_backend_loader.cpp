// calibrate/torch_backend_loader.cpp — the torch backend as the torch-free libraries reach it: made
// in the libtorch module (torch_module/), loaded on the first call; its version from libtorch's
// headers alone.
#include <torch/version.h>

#include "calibrate/layer_backend.hpp"
#include "torch_module/torch_module.hpp"

namespace dnntune::calibrate {

std::string libtorch_version() { return std::string("libtorch ") + TORCH_VERSION; }

Expected<std::unique_ptr<LayerBackend>> make_torch_backend(bool cuda) {
  auto make = torch_module::entry<std::unique_ptr<LayerBackend>(bool)>("dnntune_torch_make_backend");
  if (!make) return make.error();
  return (*make)(cuda);
}

Expected<bool> torch_cuda_available() {
  auto available = torch_module::entry<bool()>("dnntune_torch_cuda_available");
  if (!available) return available.error();
  return (*available)();
}

}  // namespace dnntune::calibrate
