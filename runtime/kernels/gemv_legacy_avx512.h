// The 32-weight block types (Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q8_0) at AVX-512 width: Qwen2.5's
// 896-wide layers fall back to Q5_0 in a Q4_K_M file and to Q5_1 in a Q5_K_M one, Q4_0
// files are all Q4_0, and Q8_0 is the type most files are benchmarked in. Q8_0 goes two
// blocks to a 512-bit register, its quants made unsigned for vpdpbusd; the nibble types
// four blocks to a register, laid out by one word permute, their low and high nibbles in
// two vpdpbusd, Q5's fifth bits put in place by vpmultishiftqb, IQ4_NL's values looked up
// by vpshufb. One FMA scales all the blocks of a register at once; Q4_1/Q5_1's min term
// m·Σx takes each activation block's Σx, computed once per product. (Q8_0 on gemv_rows.h's 256-bit walk read 31 GB/s in cache on one Zen
// 5 core, barely more than memory delivers, so decode reached neither.)
#ifndef TOYLLM_RUNTIME_KERNELS_GEMV_LEGACY_AVX512_H_
#define TOYLLM_RUNTIME_KERNELS_GEMV_LEGACY_AVX512_H_

#include "runtime/kernels/quantize_activations.h"
#include "runtime/weights.h"

namespace toyllm {

// y[r] = W.row(r) · x for rows [row_begin, row_end) of a Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL
// or Q8_0 matrix. Only callable where DetectedCpuLevel() allows AVX-512.
void RowsLegacyAvx512(const Matrix& w, const ActivationBlock* x, int row_begin, int row_end, float* y);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_GEMV_LEGACY_AVX512_H_
