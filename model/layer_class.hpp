// model/layer_class.hpp — the classes of layers that share cost-model parameters: the kernel
// classes of workloads/kernel_class.hpp (one taxonomy, also the calibration plan's), as the
// model names them, and how a backend's dispatch rules (workloads/backends.hpp) classify a layer.
#pragma once

#include <cstdint>
#include <string>

#include "workloads/backends.hpp"
#include "workloads/costs.hpp"
#include "workloads/kernel_class.hpp"
#include "workloads/layer.hpp"

namespace dnntune::model {

using LayerClass = workloads::KernelClass;
constexpr int layer_class_count = workloads::kernel_class_count;
constexpr int pass_count = 3;

// The class of `spec` as `backend` runs it at `batch` per process on `threads` threads: the
// framework's dispatch decides the kernel, and with it the class (see conv_native). A backend
// name the registry does not know gets its shape's class.
LayerClass classify(const workloads::LayerSpec& spec, const workloads::BackendTraits& backend, std::int64_t batch,
                    int threads);
LayerClass classify(const workloads::LayerSpec& spec, const std::string& backend, std::int64_t batch, int threads);
std::string class_name(LayerClass layer_class);
int pass_index(workloads::Pass pass);

}  // namespace dnntune::model
