#include "runtime/cpu_features.h"

#include <cstdlib>
#include <cstring>

namespace toyllm {
namespace {

CpuLevel Detect() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  CpuLevel level = CpuLevel::kScalar;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("f16c")) {
    level = CpuLevel::kAvx2;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl")) {
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

const char* CpuLevelName(CpuLevel level) {
  switch (level) {
    case CpuLevel::kScalar: return "scalar";
    case CpuLevel::kAvx2: return "avx2";
    case CpuLevel::kAvx512: return "avx512";
  }
  return "?";
}

}  // namespace toyllm
