// calibrate/layer_backend.cpp — which backends of the registry (workloads/backends.hpp) this
// build can run here, and making one by name. "torch-cuda" can run only when CMake found a
// libtorch built with CUDA (DNNTUNE_TORCH_CUDA) and it sees a GPU; Debian's libtorch is CPU-only.
#include "calibrate/layer_backend.hpp"

namespace dnntune::calibrate {

namespace {

bool can_run_here(const workloads::BackendTraits& backend) {
  if (backend.device == workloads::Device::cpu) return true;
#ifdef DNNTUNE_TORCH_CUDA
  if (backend.library != workloads::KernelLibrary::libtorch) return false;
  const auto available = torch_cuda_available();
  return available && *available;
#else
  return false;
#endif
}

}  // namespace

std::vector<std::string> available_backends() {
  std::vector<std::string> names;
  for (const auto& backend : workloads::backend_registry())
    if (can_run_here(backend)) names.emplace_back(backend.name);
  return names;
}

namespace {

const workloads::BackendTraits* runnable_backend(const std::string& name) {
  const auto* backend = workloads::find_backend(name);
  return backend && can_run_here(*backend) ? backend : nullptr;
}

Error unavailable(const std::string& name) {
#ifdef DNNTUNE_TORCH_CUDA
  // The CUDA libtorch backend is unavailable too when the libtorch module cannot load: say why.
  const auto* backend = workloads::find_backend(name);
  if (backend && backend->library == workloads::KernelLibrary::libtorch && backend->device == workloads::Device::cuda)
    if (auto available = torch_cuda_available(); !available) return available.error();
#endif
  std::string known;
  for (const auto& available : available_backends()) known += (known.empty() ? "" : ", ") + available;
  return bad_input("unknown or unavailable backend '" + name + "' (available here: " + known + ")");
}

}  // namespace

Expected<std::unique_ptr<LayerBackend>> make_backend(const std::string& name) {
  const auto* backend = runnable_backend(name);
  if (!backend) return unavailable(name);
  switch (backend->library) {
    case workloads::KernelLibrary::onednn:
      return make_onednn_backend();
    case workloads::KernelLibrary::libtorch:
      return make_torch_backend(backend->device == workloads::Device::cuda);
  }
  return unavailable(name);
}

Expected<std::string> backend_version(const std::string& name) {
  const auto* backend = runnable_backend(name);
  if (!backend) return unavailable(name);
  switch (backend->library) {
    case workloads::KernelLibrary::onednn:
      return onednn_backend_version();
    case workloads::KernelLibrary::libtorch:
      return libtorch_version();
  }
  return unavailable(name);
}

}  // namespace dnntune::calibrate
