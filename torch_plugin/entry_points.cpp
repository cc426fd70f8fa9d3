// torch_plugin/entry_points.cpp — the libtorch module's entry points (torch_module/torch_module.hpp):
// what the torch-free libraries call through torch_module::entry, by these names. Only these are
// exported: the module's own copies of the static libraries stay hidden (CMakeLists.txt).
#include <memory>

#include "calibrate/layer_backend.hpp"
#include "train/trainer.hpp"

#define DNNTUNE_ENTRY extern "C" __attribute__((visibility("default")))

DNNTUNE_ENTRY const char* dnntune_torch_module_version() { return DNNTUNE_TORCH_MODULE_VERSION; }

DNNTUNE_ENTRY dnntune::Expected<dnntune::train::TrainingOutcome> dnntune_torch_train(
    const dnntune::train::TrainOptions& options) {
  return dnntune::train::train_with_libtorch(options);
}

DNNTUNE_ENTRY std::unique_ptr<dnntune::calibrate::LayerBackend> dnntune_torch_make_backend(bool cuda) {
  return dnntune::calibrate::make_libtorch_backend(cuda);
}

DNNTUNE_ENTRY bool dnntune_torch_cuda_available() { return dnntune::calibrate::libtorch_cuda_available(); }
