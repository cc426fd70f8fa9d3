// workloads/backends.hpp — the one registry of layer backends: each backend's name, the device
// it runs on, the library behind it, the kernel classes it has, and its dispatch rules (which
// kernel a framework really runs a layer on). Pure and light (no oneDNN, no libtorch), so the
// model (model/layer_class.*), the command line (cli/) and the measuring code
// (calibrate/layer_backend.cpp, which makes a backend from its entry) all read one table.
//
// A backend is named on disk (measurement records, calibrations: "torch", "onednn",
// "torch-cuda"); a Backend is a typed handle to its registry entry.
#pragma once

#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "workloads/kernel_class.hpp"
#include "workloads/layer.hpp"

namespace dnntune::workloads {

enum class Device { cpu, cuda };
enum class KernelLibrary { onednn, libtorch };  // which library the probe drives for it

// The class a framework runs `spec` as at `batch` per process on `threads` threads, given the
// class its shape picks (shape_class). Rules are facts about a framework's source, cited there.
using DispatchRule = KernelClass (*)(const LayerSpec& spec, KernelClass shape_class, std::int64_t batch, int threads);

struct BackendTraits {
  std::string_view name;  // as on disk and on the command line
  Device device;
  KernelLibrary library;
  std::bitset<kernel_class_count> kernel_classes;  // the classes its layers can be classified as
  DispatchRule dispatch;                           // nullptr: every layer runs as its shape's class
};

// Every backend dnntune knows, in the order calibrate measures them ("onednn", "torch",
// "torch-cuda"). Whether one can run here is the probe's question (available_backends).
const std::vector<BackendTraits>& backend_registry();

// A backend by name: nullptr when unknown.
const BackendTraits* find_backend(std::string_view name);
// A backend by name, or bad_input naming the known ones.
Expected<const BackendTraits*> backend_named(std::string_view name);

// The names of the registered backends (on `device`), in registry order.
std::vector<std::string> backend_names();
std::vector<std::string> backend_names(Device device);

// The class `spec` runs as on `backend` at `batch` per process on `threads` threads: its
// shape's class, then the backend's dispatch rule.
KernelClass dispatched_class(const LayerSpec& spec, const BackendTraits& backend, std::int64_t batch, int threads);

std::string_view device_name(Device device);  // "cpu", "cuda"

}  // namespace dnntune::workloads
