// probe/cpu_features.cpp — see cpu_features.hpp.
#include "probe/cpu_features.hpp"

#include <cpuid.h>

#include <oneapi/dnnl/dnnl.h>

namespace dnntune::probe {

std::vector<std::string> detect_dnn_isa_features() {
  std::vector<std::string> features;
  // __builtin_cpu_supports checks that the OS saves the wide registers, not just CPUID bits.
  __builtin_cpu_init();
  const bool avx = __builtin_cpu_supports("avx");
  const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx) features.push_back("avx");
  if (__builtin_cpu_supports("fma")) features.push_back("fma");
  if (__builtin_cpu_supports("avx2")) features.push_back("avx2");
  if (avx512) features.push_back("avx512f");

  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return features;
  const unsigned max_subleaf = eax;
  if (avx512) {
    if (ebx & (1u << 30)) features.push_back("avx512bw");
    if (ebx & (1u << 31)) features.push_back("avx512vl");
    if (ecx & (1u << 11)) features.push_back("avx512_vnni");
  }
  const bool amx_tile = edx & (1u << 24), amx_bf16 = edx & (1u << 22), amx_int8 = edx & (1u << 25);
  unsigned eax1 = 0, ebx1 = 0, ecx1 = 0, edx1 = 0;
  if (max_subleaf >= 1 && __get_cpuid_count(7, 1, &eax1, &ebx1, &ecx1, &edx1)) {
    if (avx && (eax1 & (1u << 4))) features.push_back("avx_vnni");
    if (avx512 && (eax1 & (1u << 5))) features.push_back("avx512_bf16");
  }
  if (amx_tile) features.push_back("amx_tile");
  if (amx_bf16) features.push_back("amx_bf16");
  if (amx_int8) features.push_back("amx_int8");
  return features;
}

std::string onednn_effective_isa() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41:
      return "sse41";
    case dnnl_cpu_isa_avx:
      return "avx";
    case dnnl_cpu_isa_avx2:
      return "avx2";
    case dnnl_cpu_isa_avx2_vnni:
      return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic:
      return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops:
      return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core:
      return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "unknown";
  }
}

std::string onednn_version() {
  const dnnl_version_t* version = dnnl_version();
  return std::to_string(version->major) + "." + std::to_string(version->minor) + "." + std::to_string(version->patch);
}

}  // namespace dnntune::probe
