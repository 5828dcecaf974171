// Softmax, x ← exp(x − max) / Σ exp(x − max): attention's weights over every cached key and
// the sampler's probabilities over the vocabulary. At a 4096-token context a 1B model takes
// two million exponentials per decoded token, so this is a kernel like the matrix products.
#ifndef TOYLLM_RUNTIME_KERNELS_SOFTMAX_H_
#define TOYLLM_RUNTIME_KERNELS_SOFTMAX_H_

#include "runtime/cpu_features.h"

namespace toyllm {

using SoftmaxKernel = void (*)(float* x, int n);

// The scalar reference: libm's expf, then a division by the sum.
void SoftmaxScalar(float* x, int n);
// Eight lanes at a time with a polynomial exp within two ulp of expf; entries more than
// 87.3 below the maximum (weights under 1e-38) become 0. Only callable where
// DetectedCpuLevel() allows AVX2; AVX-512 machines use it too, as the exponentials cost
// little beside the products that produce their inputs.
void SoftmaxAvx2(float* x, int n);

// The kernel for `level`; Softmax() (runtime/ops.h) uses DetectedCpuLevel()'s.
SoftmaxKernel SoftmaxFor(CpuLevel level);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_SOFTMAX_H_
