// calibrate/layer_backend.hpp — the one interface every layer micro-run backend implements
// (oneDNN primitives, libtorch ATen on CPU, libtorch on CUDA), so the runner, the numerical
// check and the whole-network runs never know which library they drive. A light header: no
// oneDNN or libtorch, those stay inside onednn_*.cpp and torch_*.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "workloads/backends.hpp"
#include "workloads/costs.hpp"
#include "workloads/graph.hpp"
#include "workloads/layer.hpp"

namespace dnntune::calibrate {

// Work set up once (kernels created, operands allocated and filled) and run many times.
class PreparedRun {
 public:
  virtual ~PreparedRun() = default;
  // Runs once and returns when the result is complete (on a GPU: synchronised). Throws
  // (std::exception) when the kernel breaks.
  virtual void run() = 0;
  // The device time of the last run() where the backend measures it (torch-cuda: CUDA events),
  // which the worker records instead of the host's wall clock around a synchronised run.
  virtual std::optional<double> last_device_seconds() const { return std::nullopt; }
};

// One pass of one layer at one batch. Each run() uses the next of its operand sets in turn.
class PreparedLayer : public PreparedRun {
 public:
  // Replaces the inputs of every operand set (pass_operands order, plain layout) and recomputes
  // what the pass keeps from its forward (batch statistics, pooling indices, log-probabilities;
  // a dropout mask stays whatever random mask the backend drew). For the numerical check.
  virtual void set_inputs(const std::vector<std::vector<float>>& inputs) = 0;
  // The outputs of the last run (pass_operands order, plain layout).
  virtual std::vector<std::vector<float>> outputs() = 0;
};

class LayerBackend {
 public:
  virtual ~LayerBackend() = default;
  virtual std::string name() const = 0;     // "onednn", "torch", "torch-cuda"
  virtual std::string version() const = 0;  // "oneDNN 2.6.3", "libtorch 1.13.0"
  // Threads for everything prepared and run in this process from now on.
  virtual void set_threads(int threads) = 0;
  // The arithmetic of everything prepared from now on (plan.hpp's MicroPrecision words): "fp32"
  // (strict), "tf32", "bf16", "fp16"; "contiguous" or "channels_last". bad_input for what the
  // backend does not run: a CPU backend runs fp32 contiguous only.
  virtual Expected<void> set_precision(const std::string& precision, const std::string& memory_format) {
    if (precision == "fp32" && memory_format == "contiguous") return {};
    return bad_input(name() + " runs fp32 contiguous only, not " + precision + " " + memory_format);
  }

  // Sets up `pass` of the layer at `batch` with `operand_sets` independent operand sets
  // (layer_operands.hpp). Errors: bad_input when the backend has no kernel for it (recorded as
  // unimplemented), failure when setting it up broke (recorded as failed).
  virtual Expected<std::unique_ptr<PreparedLayer>> prepare(const workloads::LayerSpec& spec, std::int64_t batch,
                                                           workloads::Pass pass, int operand_sets) = 0;

  // One training step of the whole network without the optimizer: forward through every layer
  // in order, then backward in reverse (data gradients where the network needs them, weight
  // gradients, gradient sums where a tensor has several readers), tensors flowing from layer
  // to layer as in a framework. The additivity check compares it with the sum of the layers.
  virtual Expected<std::unique_ptr<PreparedRun>> prepare_network(const workloads::Network& network,
                                                                 std::int64_t batch) = 0;
};

// The backends of the registry (workloads/backends.hpp) this build can run here: "onednn",
// "torch", and "torch-cuda" when libtorch was built with CUDA and a GPU is visible.
std::vector<std::string> available_backends();

// A backend by name; an unknown or unavailable one is bad_input naming the available ones.
Expected<std::unique_ptr<LayerBackend>> make_backend(const std::string& name);

// The backend's version as its version() says it ("oneDNN 2.6.3", "libtorch 1.13.0"), without
// making it (a cache entry is named by it: the torch backend's would load libtorch); an unknown
// or unavailable one as make_backend.
Expected<std::string> backend_version(const std::string& name);

// The constructors make_backend chooses from, one per backend file. The torch backend lives in
// the libtorch module (torch_module/): make_torch_backend and torch_cuda_available load it on
// their first call (torch_backend_loader.cpp), a failure when it cannot be loaded;
// make_libtorch_backend and libtorch_cuda_available are the module's own (torch_backend.cpp).
std::unique_ptr<LayerBackend> make_onednn_backend();
std::string onednn_backend_version();  // "oneDNN 2.6.3": the library loaded
Expected<std::unique_ptr<LayerBackend>> make_torch_backend(bool cuda);
Expected<bool> torch_cuda_available();  // a CUDA libtorch that sees a GPU; a failure when the module cannot load
std::unique_ptr<LayerBackend> make_libtorch_backend(bool cuda);
bool libtorch_cuda_available();
std::string libtorch_version();  // "libtorch 1.13.0": the headers this build compiled against

}  // namespace dnntune::calibrate
