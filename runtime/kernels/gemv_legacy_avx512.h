// The legacy 32-weight block types Q4_0 and Q5_0 at AVX-512 width: Qwen2.5's
// 896-wide layers fall back to Q5_0 in a Q4_K_M file, and Q4_0 files are all Q4_0. Two
// blocks share a 512-bit register: their nibbles are spread over it with one variable shift,
// Q5's fifth bits come in through a 64-bit mask, vpdpbusd makes 16 sums of four (eight per
// block) and one FMA scales them by both blocks' scales at once. Q8_0 keeps the 256-bit walk
// of gemv_rows.h, which already reads as fast as memory delivers, and so do Q4_1 and Q5_1:
// their min term (a second product, by Σx) made the 512-bit form slower than it.
#ifndef TOYLLM_RUNTIME_KERNELS_GEMV_LEGACY_AVX512_H_
#define TOYLLM_RUNTIME_KERNELS_GEMV_LEGACY_AVX512_H_

#include "runtime/kernels/quantize_activations.h"
#include "runtime/weights.h"

namespace toyllm {

// y[r] = W.row(r) · x for rows [row_begin, row_end) of a Q4_0 or Q5_0 matrix.
// Only callable where DetectedCpuLevel() allows AVX-512.
void RowsLegacyAvx512(const Matrix& w, const ActivationBlock* x, int row_begin, int row_end, float* y);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_GEMV_LEGACY_AVX512_H_
