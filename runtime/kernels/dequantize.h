// Dequantising many weights at once, for prefill: GEMM runs on float32 tiles of rows, and
// converting them must cost little next to the multiply-adds. ToFloat32 (runtime/
// weight_convert.h) is the scalar reference; this uses F16C/AVX2 where the CPU has them
// (dequantize_avx2.cc).
#ifndef TOYLLM_RUNTIME_KERNELS_DEQUANTIZE_H_
#define TOYLLM_RUNTIME_KERNELS_DEQUANTIZE_H_

#include <cstdint>

#include "runtime/weight_type.h"

namespace toyllm {

// out[0, n) = the n weights of `type` at `data` (n a whole number of blocks), as ToFloat32.
void Dequantize(WeightType type, const void* data, int64_t n, float* out);

// The same with AVX2, only callable where DetectedCpuLevel() allows.
void DequantizeAvx2(WeightType type, const void* data, int64_t n, float* out);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_DEQUANTIZE_H_
