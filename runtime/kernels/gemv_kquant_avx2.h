// The K-quant GEMV rows at AVX2 width for the types Q4_K_M, Q5_K_M and Q6_K files are made
// of, for processors without AVX-512. gemv_rows.h's K-quant walk (kept for Q2_K and Q3_K)
// unpacks a whole super-block into memory, then multiplies it; here each register of 32
// weights is multiplied as soon as it is unpacked, with the same unpackers. In cache on one
// Zen 5 core, Q4_K rows 22 → 24.8 GB/s, Q5_K 19 → 22, Q6_K 26 → 30 (llama.cpp's AVX2 kernels
// 23, 19 and 20 on the same rows), and the four times fewer stores and loads let decode from
// memory gain more: llama3.2-1b q4_k_m on one thread 17–21 → 21.5–26 tokens/s.
#ifndef TOYLLM_RUNTIME_KERNELS_GEMV_KQUANT_AVX2_H_
#define TOYLLM_RUNTIME_KERNELS_GEMV_KQUANT_AVX2_H_

#include "runtime/kernels/quantize_activations.h"
#include "runtime/weights.h"

namespace toyllm {

// y[r] = W.row(r) · x for rows [row_begin, row_end) of a Q4_K, Q5_K or Q6_K matrix. Only
// callable where DetectedCpuLevel() allows AVX2.
void RowsQ4_KAvx2(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y);
void RowsQ5_KAvx2(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y);
void RowsQ6_KAvx2(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_GEMV_KQUANT_AVX2_H_
