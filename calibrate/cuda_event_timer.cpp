// calibrate/cuda_event_timer.cpp — see cuda_event_timer.hpp. The CUDA runtime API only.
#include "calibrate/cuda_event_timer.hpp"

#include <string>

#include <cuda_runtime_api.h>

namespace dnntune::calibrate {

struct CudaEventTimer::Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  ~Events() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};

namespace {

Error cuda_error(const char* what, cudaError_t status) {
  return failure(std::string(what) + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

}  // namespace

Expected<CudaEventTimer> CudaEventTimer::create() {
  int devices = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&devices); status != cudaSuccess)
    return cuda_error("no usable CUDA device", status);
  if (devices == 0) return failure("no usable CUDA device: none found");
  auto events = std::make_shared<Events>();
  if (const cudaError_t status = cudaEventCreate(&events->start); status != cudaSuccess)
    return cuda_error("cudaEventCreate", status);
  if (const cudaError_t status = cudaEventCreate(&events->stop); status != cudaSuccess)
    return cuda_error("cudaEventCreate", status);
  return CudaEventTimer(std::move(events));
}

Expected<void> CudaEventTimer::start(void* stream) {
  if (const cudaError_t status = cudaEventRecord(events_->start, static_cast<cudaStream_t>(stream));
      status != cudaSuccess)
    return cuda_error("cudaEventRecord", status);
  return {};
}

Expected<double> CudaEventTimer::stop(void* stream) {
  if (const cudaError_t status = cudaEventRecord(events_->stop, static_cast<cudaStream_t>(stream));
      status != cudaSuccess)
    return cuda_error("cudaEventRecord", status);
  if (const cudaError_t status = cudaEventSynchronize(events_->stop); status != cudaSuccess)
    return cuda_error("cudaEventSynchronize", status);
  float milliseconds = 0;
  if (const cudaError_t status = cudaEventElapsedTime(&milliseconds, events_->start, events_->stop);
      status != cudaSuccess)
    return cuda_error("cudaEventElapsedTime", status);
  return milliseconds * 1e-3;
}

}  // namespace dnntune::calibrate
