// train/precision_rules.cpp — see precision.hpp: the words of --precision and --memory-format and
// what each resolves to, without libtorch (the command checks them before the module is loaded).
#include "train/precision.hpp"

#include "records/measurement.hpp"

#ifdef DNNTUNE_CUDA_RUNTIME
#include <cuda_runtime_api.h>
#endif

namespace dnntune::train {

bool is_precision(const std::string& word) { return word == "auto" || records::is_precision_name(word); }

bool is_memory_format(const std::string& word) { return records::is_memory_format_name(word); }

std::string resolve_precision(const std::string& asked, bool on_cuda, int compute_major) {
  if (asked != "auto") return asked;
  return on_cuda && compute_major >= 8 ? "tf32" : "fp32";
}

int cuda_compute_capability_major(int index) {
#ifdef DNNTUNE_CUDA_RUNTIME
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, index) != cudaSuccess) {
    (void)cudaGetLastError();  // clear it: libtorch reads the same sticky error state
    return 0;
  }
  return major;
#else
  (void)index;
  return 0;
#endif
}

Expected<void> check_precision_options(const std::string& precision, const std::string& memory_format,
                                       const std::string& device) {
  if (!is_precision(precision))
    return bad_input("--precision must be auto, fp32, tf32, bf16 or fp16, not '" + precision + "'");
  if (!is_memory_format(memory_format))
    return bad_input("--memory-format must be contiguous or channels_last, not '" + memory_format + "'");
  if (device == "cpu" && precision != "auto" && precision != "fp32")
    return bad_input("--precision " + precision + " runs on a GPU (--device cuda): on the CPU the trainer runs fp32");
  return {};
}

}  // namespace dnntune::train
