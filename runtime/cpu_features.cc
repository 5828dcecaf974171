#include "runtime/cpu_features.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstdlib>
#include <cstring>

namespace toyllm {
namespace {

#if defined(__x86_64__)
// clang 14's __builtin_cpu_supports does not know "f16c"; CPUID leaf 1 tells.
bool HasF16c() {
  unsigned eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}

// AVX512_BF16 is CPUID leaf 7, sub-leaf 1, EAX bit 5 (clang 14 has no name for it).
bool HasAvx512Bf16() {
  unsigned eax, ebx, ecx, edx;
  return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 5)) != 0;
}

// vdpbf16ps does 32 multiply-adds where an FMA does 16, but only AMD's cores issue it often
// enough for that to pay: on an Intel Xeon (Emerald Rapids), twelve independent chains of
// each ran 1.35 G vdpbf16ps a second against 5.47 G FMAs, half FMA's multiply-adds, and
// llama3.2-1b q8_0 pp512 ran 36.6 tok/s through the bf16 GEMM, 64.9 through sgemm. On Zen 4
// it is the other way round (190–215 GFLOP/s against sgemm's 95).
bool IsAmd() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;  // gcc -O1 cannot see __get_cpuid set them
  return __get_cpuid(0, &eax, &ebx, &ecx, &edx) && ebx == signature_AMD_ebx && edx == signature_AMD_edx &&
         ecx == signature_AMD_ecx;
}
#endif

CpuLevel Detect() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  CpuLevel level = CpuLevel::kScalar;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && HasF16c()) {
    level = CpuLevel::kAvx2;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni") &&
        __builtin_cpu_supports("avx512vbmi")) {
      level = CpuLevel::kAvx512;
    }
  }
  const char* cap = std::getenv("TOYLLM_CPU");
  if (cap != nullptr && std::strcmp(cap, "scalar") == 0) level = CpuLevel::kScalar;
  if (cap != nullptr && std::strcmp(cap, "avx2") == 0 && level == CpuLevel::kAvx512) {
    level = CpuLevel::kAvx2;
  }
  return level;
#else
  return CpuLevel::kScalar;
#endif
}

}  // namespace

CpuLevel DetectedCpuLevel() {
  static const CpuLevel level = Detect();
  return level;
}

bool CpuHasBf16Dot() {
#if defined(__x86_64__)
  static const bool has = [] {
    const char* cap = std::getenv("TOYLLM_CPU");
    return DetectedCpuLevel() == CpuLevel::kAvx512 && HasAvx512Bf16() && (cap == nullptr || *cap == '\0');
  }();
  return has;
#else
  return false;
#endif
}

bool PrefillUsesBf16() {
#if defined(__x86_64__)
  static const bool uses = CpuHasBf16Dot() && IsAmd();
  return uses;
#else
  return false;
#endif
}

const char* CpuLevelName(CpuLevel level) {
  switch (level) {
    case CpuLevel::kScalar: return "scalar";
    case CpuLevel::kAvx2: return "avx2";
    case CpuLevel::kAvx512: return "avx512";
  }
  return "?";
}

const char* KernelsInUse() {
  return PrefillUsesBf16() ? "avx512, bf16 prefill" : CpuLevelName(DetectedCpuLevel());
}

}  // namespace toyllm
