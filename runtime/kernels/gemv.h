// GEMV, y = W·x for one activation row: decode's matrix products. Decode reads every
// weight once per token, so these kernels are bound by memory bandwidth; they walk W's rows
// one after another (the order the hardware prefetcher follows) and read each weight type
// as stored, converting to float32 in registers.
#ifndef TOYLLM_RUNTIME_KERNELS_GEMV_H_
#define TOYLLM_RUNTIME_KERNELS_GEMV_H_

#include "runtime/cpu_features.h"
#include "runtime/kernels/quantize_activations.h"
#include "runtime/weights.h"

namespace toyllm {

// One activation row as the kernels multiply it: w.cols floats, and for quantized weights
// the same row quantized — once per product, not once per slice of rows.
struct GemvInput {
  const float* values;
  const ActivationBlock* blocks = nullptr;     // Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL
  const ActivationBlockK* k_blocks = nullptr;  // the K-quants (IsKQuant)
};

// y[r] = W.row(r) · x for rows [row_begin, row_end).
using GemvKernel = void (*)(const Matrix& w, const GemvInput& x, int row_begin, int row_end,
                            float* y);

// The scalar reference: float32 products summed in order; for quantized weights each
// block's integer products summed (from UnpackBlock, runtime/quant_unpack.h), then scaled
// by both blocks' scales.
void GemvScalar(const Matrix& w, const GemvInput& x, int row_begin, int row_end, float* y);
// Only callable where DetectedCpuLevel() allows.
void GemvAvx2(const Matrix& w, const GemvInput& x, int row_begin, int row_end, float* y);
void GemvAvx512(const Matrix& w, const GemvInput& x, int row_begin, int row_end, float* y);

// The kernel for `level`; Gemv() uses DetectedCpuLevel()'s.
GemvKernel GemvFor(CpuLevel level);
void Gemv(const Matrix& w, const GemvInput& x, int row_begin, int row_end, float* y);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_GEMV_H_
