// gate ← silu(gate) ⊙ up, silu(g) = g · sigmoid(g): the feed-forward layer's non-linearity,
// an exponential for every hidden unit of every row — 131,072 a decoded token on a 1B
// model, half a million a layer in a 512-token prefill — so a kernel beside softmax.
#ifndef TOYLLM_RUNTIME_KERNELS_SWIGLU_H_
#define TOYLLM_RUNTIME_KERNELS_SWIGLU_H_

#include "runtime/cpu_features.h"

namespace toyllm {

using SwiGluKernel = void (*)(float* gate, const float* up, int n);

// The scalar reference: libm's expf.
void SwiGluScalar(float* gate, const float* up, int n);
// Eight lanes at a time with softmax's polynomial exp (runtime/kernels/exp_avx2.h) of
// −|g|, which never overflows: sigmoid(g) = 1 / (1 + e) for g ≥ 0, e / (1 + e) below, with
// e = exp(−|g|). Only callable where DetectedCpuLevel() allows AVX2.
void SwiGluAvx2(float* gate, const float* up, int n);

// The kernel for `level`; SwiGlu() (runtime/ops.h) uses DetectedCpuLevel()'s.
SwiGluKernel SwiGluFor(CpuLevel level);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_SWIGLU_H_
