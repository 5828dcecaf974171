// The BLAS that runs the batched matrix products (prefill), what kernels it chose, and the
// fix for one way it goes wrong: OpenBLAS built with DYNAMIC_ARCH picks its kernels from
// the CPU's family and model numbers, and on a processor newer than the build it falls
// back to the oldest SSE kernels ("Prescott"): a prefill five times slower, in silence.
// 0.3.21 also gives AMD's AVX-512 processors (Zen 4, Zen 5) its AVX2 kernels ("Haswell"),
// which on Zen 5's full-width AVX-512 units is half the GEMM speed.
#ifndef TOYLLM_RUNTIME_BLAS_H_
#define TOYLLM_RUNTIME_BLAS_H_

#include <string>

#include "runtime/cpu_features.h"

namespace toyllm {

struct BlasInfo {
  std::string config;       // openblas_get_config(): "OpenBLAS 0.3.21 DYNAMIC_ARCH ..."
  std::string core;         // the kernels in use (openblas_get_corename()): "Haswell"
  std::string chosen_core;  // what OpenBLAS chose by itself, when toyllm replaced it
  bool fallback = false;    // the kernels in use are older than what the CPU can run
};

// The BLAS as it is now. The first call (made when the library loads) also replaces a
// generic fallback with the kernels the CPU can run (SkylakeX for AVX-512, Haswell for
// AVX2), unless TOYLLM_KEEP_BLAS_CORE=1 asks to keep OpenBLAS's own choice.
const BlasInfo& Blas();

// The kernels in use and why, for `info` and `bench`: "Haswell", "Haswell (OpenBLAS
// chose Prescott, a fallback)", "Prescott (a generic fallback on this CPU: prefill runs slow)".
std::string BlasKernels();

// Whether a core name is one of OpenBLAS's x86 kernel sets below the level the CPU offers
// (pre-AVX2 ones on an AVX2 CPU, AVX2 ones on an AVX-512 CPU): the test of a fallback.
bool IsFallbackCore(const std::string& core, CpuLevel cpu);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_BLAS_H_
