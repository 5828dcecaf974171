// The K-quant GEMV rows at AVX-512 width for the types Q4_K_M, Q5_K_M and Q6_K files are
// made of. The AVX2 kernels (gemv_kquant_avx2.h) make a 32-byte register of 32 weights at
// a time and multiply each by its groups' scales in int16. Here one 64-byte load
// of quants makes two registers of 64 weights; vpmaddubsw multiplies them by the int8
// activations into pairs, vpdpwssd multiplies the pairs by their groups' scales (shuffled
// into place from the block's) and adds them into int32 sums, and one float FMA a block
// applies its scale. Rows are prefetched ahead of the hardware prefetcher.
#ifndef TOYLLM_RUNTIME_KERNELS_GEMV_KQUANT_AVX512_H_
#define TOYLLM_RUNTIME_KERNELS_GEMV_KQUANT_AVX512_H_

#include "runtime/kernels/quantize_activations.h"
#include "runtime/weights.h"

namespace toyllm {

// y[r] = W.row(r) · x for rows [row_begin, row_end) of a Q4_K, Q5_K or Q6_K matrix. Only
// callable where DetectedCpuLevel() allows AVX-512.
void RowsQ4_KAvx512(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y);
void RowsQ5_KAvx512(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y);
void RowsQ6_KAvx512(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_GEMV_KQUANT_AVX512_H_
