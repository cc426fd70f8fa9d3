// probe/cpu_features.hpp — what this CPU can do for DNN kernels: model name, the ISA
// extensions that decide which convolution kernels run (AVX2, FMA, AVX-512, VNNI, BF16, AMX),
// and the ISA oneDNN actually dispatches to.
#pragma once

#include <string>
#include <vector>

namespace dnntune::probe {

// From CPUID (with the OS's register-state support checked for AVX/AVX-512), in a fixed order.
std::vector<std::string> detect_dnn_isa_features();

// oneDNN's effective ISA, e.g. "avx512_core_bf16" (dnnl_get_effective_cpu_isa).
std::string onednn_effective_isa();

// oneDNN's version, e.g. "2.6.3".
std::string onednn_version();

}  // namespace dnntune::probe
