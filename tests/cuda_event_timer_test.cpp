// tests/cuda_event_timer_test.cpp — the CUDA-event timer of the torch-cuda backend, built wherever
// a CUDA toolkit is found. Without a GPU (this project's CI) it must say so as an error value,
// not crash; with one, it times a device memset of 256 MiB as more than zero and less than the
// time the slowest GPU of the model's profiles would take ten times over.
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include "calibrate/cuda_event_timer.hpp"

using dnntune::calibrate::CudaEventTimer;

TEST_CASE("CUDA events time device work, or say there is no GPU") {
  auto timer = CudaEventTimer::create();
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    REQUIRE_FALSE(timer);
    CHECK(timer.error().kind == dnntune::ErrorKind::failure);
    CHECK(timer.error().message.find("no usable CUDA device") == 0);
    return;
  }
  REQUIRE(timer);
  constexpr std::size_t bytes = 256u << 20;
  void* buffer = nullptr;
  REQUIRE(cudaMalloc(&buffer, bytes) == cudaSuccess);
  REQUIRE(timer->start());
  REQUIRE(cudaMemsetAsync(buffer, 1, bytes, nullptr) == cudaSuccess);
  const auto seconds = timer->stop();
  cudaFree(buffer);
  REQUIRE(seconds);
  CHECK(*seconds > 0);
  CHECK(*seconds < 10 * bytes / 240e9 + 0.1);  // a K80 die's 240 GB/s, ten times over, plus launch
}
