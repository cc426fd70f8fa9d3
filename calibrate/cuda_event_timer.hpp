// calibrate/cuda_event_timer.hpp — the GPU time of work queued on the current CUDA stream,
// between two CUDA events: what the kernels took on the device, without the host's launch and
// synchronisation latency that a wall clock around a synchronised run adds (10-30 us, as much as
// a small layer pass itself). Used by the "torch-cuda" backend; compiled only where a CUDA
// toolkit is found (DNNTUNE_CUDA_EVENTS). A light header: no CUDA headers.
#pragma once

#include <memory>

#include "common/expected.hpp"

namespace dnntune::calibrate {

class CudaEventTimer {
 public:
  // Two events on the current device; failure (with CUDA's message) where there is no usable GPU.
  static Expected<CudaEventTimer> create();
  // Marks the start on `stream` (a cudaStream_t; nullptr is the legacy default stream, which
  // libtorch uses unless told otherwise).
  Expected<void> start(void* stream = nullptr);
  // Marks the end on the same stream, waits for it, and returns the seconds between the marks.
  Expected<double> stop(void* stream = nullptr);

 private:
  struct Events;
  explicit CudaEventTimer(std::shared_ptr<Events> events) : events_(std::move(events)) {}
  std::shared_ptr<Events> events_;
};

}  // namespace dnntune::calibrate
