// model/layer_class.cpp — see layer_class.hpp.
#include "model/layer_class.hpp"

namespace dnntune::model {

LayerClass classify(const workloads::LayerSpec& spec, const workloads::BackendTraits& backend, std::int64_t batch,
                    int threads) {
  return workloads::dispatched_class(spec, backend, batch, threads);
}

LayerClass classify(const workloads::LayerSpec& spec, const std::string& backend, std::int64_t batch, int threads) {
  if (const auto* traits = workloads::find_backend(backend)) return classify(spec, *traits, batch, threads);
  return workloads::shape_class(workloads::kernel_shape(spec));
}

std::string class_name(LayerClass layer_class) { return std::string(workloads::kernel_class_name(layer_class)); }

int pass_index(workloads::Pass pass) {
  switch (pass) {
    case workloads::Pass::forward:
      return 0;
    case workloads::Pass::backward_data:
      return 1;
    case workloads::Pass::backward_weights:
      return 2;
  }
  return 0;
}

}  // namespace dnntune::model
