// workloads/backends.cpp — the backend registry's entries and their dispatch rules (see
// backends.hpp). A new backend is one entry here and its constructor in calibrate/.
#include "workloads/backends.hpp"

namespace dnntune::workloads {

namespace {

// libtorch 1.13 sends a CPU float convolution to oneDNN only when ConvParams::use_mkldnn
// (aten/src/ATen/native/ConvUtils.h) holds:
//   (strided || dilated || batch >= 16 || kernel not 1x1 || more than one thread) &&
//   (grouped || kernel wider than 3x3 || batch > 1 || input of more than 20480 elements);
// otherwise its own im2col + GEMM kernel runs it, in every pass, at a small fraction of oneDNN's
// speed, so one class holding both kernels fits neither (docs/results.md, "Layer classes").
bool torch_runs_own_convolution(const LayerSpec& spec, std::int64_t batch, int threads) {
  const bool strided = spec.stride_h > 1 || spec.stride_w > 1;
  const bool dilated = spec.dilation_h > 1 || spec.dilation_w > 1;
  const bool pointwise = spec.kernel_h == 1 && spec.kernel_w == 1;
  const std::int64_t input_elements = batch * spec.input.elements();
  const bool first = strided || dilated || batch >= 16 || !pointwise || threads > 1;
  const bool second =
      spec.groups > 1 || (spec.kernel_h > 3 && spec.kernel_w > 3) || batch > 1 || input_elements > 20480;
  return !(first && second);
}

KernelClass torch_cpu_dispatch(const LayerSpec& spec, KernelClass shape_class, std::int64_t batch, int threads) {
  if (spec.kind == LayerKind::convolution && torch_runs_own_convolution(spec, batch, threads))
    return KernelClass::conv_native;
  return shape_class;
}

// Every class a layer's shape can pick (all but the dispatch-only conv_native).
std::bitset<kernel_class_count> shape_classes() {
  std::bitset<kernel_class_count> classes;
  for (int shape = 0; shape < kernel_shape_count; ++shape)
    classes.set(static_cast<std::size_t>(shape_class(static_cast<KernelShape>(shape))));
  return classes;
}

std::bitset<kernel_class_count> with(std::bitset<kernel_class_count> classes, KernelClass extra) {
  return classes.set(static_cast<std::size_t>(extra));
}

}  // namespace

const std::vector<BackendTraits>& backend_registry() {
  static const std::vector<BackendTraits> registry{
      {"onednn", Device::cpu, KernelLibrary::onednn, shape_classes(), nullptr},
      {"torch", Device::cpu, KernelLibrary::libtorch, with(shape_classes(), KernelClass::conv_native),
       torch_cpu_dispatch},
      // cuDNN runs every convolution: ConvParams::use_mkldnn, and so conv_native, is CPU-only.
      // Only built with a CUDA libtorch (DNNTUNE_TORCH_CUDA); Debian's is CPU-only.
      {"torch-cuda", Device::cuda, KernelLibrary::libtorch, shape_classes(), nullptr},
  };
  return registry;
}

const BackendTraits* find_backend(std::string_view name) {
  for (const auto& backend : backend_registry())
    if (backend.name == name) return &backend;
  return nullptr;
}

Expected<const BackendTraits*> backend_named(std::string_view name) {
  if (const auto* backend = find_backend(name)) return backend;
  std::string known;
  for (const auto& backend : backend_registry()) known += (known.empty() ? "" : ", ") + std::string(backend.name);
  return bad_input("unknown backend '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& backend : backend_registry()) names.emplace_back(backend.name);
  return names;
}

std::vector<std::string> backend_names(Device device) {
  std::vector<std::string> names;
  for (const auto& backend : backend_registry())
    if (backend.device == device) names.emplace_back(backend.name);
  return names;
}

KernelClass dispatched_class(const LayerSpec& spec, const BackendTraits& backend, std::int64_t batch, int threads) {
  const KernelClass by_shape = shape_class(kernel_shape(spec));
  return backend.dispatch ? backend.dispatch(spec, by_shape, batch, threads) : by_shape;
}

std::string_view device_name(Device device) { return device == Device::cuda ? "cuda" : "cpu"; }

}  // namespace dnntune::workloads
