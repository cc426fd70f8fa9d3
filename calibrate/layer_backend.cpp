// calibrate/layer_backend.cpp — which backends this build has, and making one by name.
// "torch-cuda" exists only when CMake found a libtorch built with CUDA (DNNTUNE_TORCH_CUDA);
// Debian's libtorch is CPU-only.
#include "calibrate/layer_backend.hpp"

namespace dnntune::calibrate {

std::vector<std::string> available_backends() {
  std::vector<std::string> names{"onednn", "torch"};
#ifdef DNNTUNE_TORCH_CUDA
  if (torch_cuda_available()) names.push_back("torch-cuda");
#endif
  return names;
}

Expected<std::unique_ptr<LayerBackend>> make_backend(const std::string& name) {
  if (name == "onednn") return make_onednn_backend();
  if (name == "torch") return make_torch_backend(false);
#ifdef DNNTUNE_TORCH_CUDA
  if (name == "torch-cuda" && torch_cuda_available()) return make_torch_backend(true);
#endif
  std::string known;
  for (const auto& available : available_backends()) known += (known.empty() ? "" : ", ") + available;
  return bad_input("unknown or unavailable backend '" + name + "' (available here: " + known + ")");
}

}  // namespace dnntune::calibrate
