// What the SIMD GEMV paths share whatever their vector width: the walk over a row's Q8_0
// blocks and the row loop per weight type. gemv_avx2.cc and gemv_avx512.cc include it
// after their target pragma and instantiate Gemv<Isa> with an `Isa` that has:
//   static constexpr DotFn kF32, kF16, kBF16;  // a row of that type · x
//   static __m256i BlockDot(const int8_t* w, const int8_t* x);
//       // 32 int8 products of a Q8_0 block and an activation block, as eight int32 sums
#ifndef TOYLLM_RUNTIME_KERNELS_GEMV_ROWS_H_
#define TOYLLM_RUNTIME_KERNELS_GEMV_ROWS_H_

#include <immintrin.h>

#include <cstring>

#include "runtime/kernels/gemv.h"
#include "runtime/weights.h"

namespace toyllm {
namespace gemv_rows {

using DotFn = float (*)(const void* row, const float* x, int n);

// A block's f16 scale (F16C: both SIMD paths have it), read without assuming alignment.
// Templates so that each instruction set compiles its own copy: one inline function
// compiled for two targets would leave the linker free to pick the AVX-512 one for both.
template <class Isa>
float BlockScale(const BlockQ8_0& block) {
  uint16_t bits;
  std::memcpy(&bits, &block.scale, sizeof(bits));
  return _cvtsh_ss(bits);
}

template <class Isa>
float Sum8(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 s2 = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

// acc + (both scales) · (the block's integer dot product, in eight lanes).
template <class Isa>
__m256 ScaledBlockDot(const BlockQ8_0& w, const ActivationBlock& x, __m256 acc) {
  const __m256 dot = _mm256_cvtepi32_ps(Isa::BlockDot(w.q, x.q));
  return _mm256_fmadd_ps(_mm256_set1_ps(BlockScale<Isa>(w) * x.scale), dot, acc);
}

// A Q8_0 row · x quantized. Four accumulators on consecutive blocks, so that no block's
// FMA waits on the previous one's.
template <class Isa>
float DotQ8_0(const void* row, const ActivationBlock* x, int n) {
  const BlockQ8_0* w = static_cast<const BlockQ8_0*>(row);
  const int n_blocks = n / kQ8Block;
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int b = 0;
  for (; b + 4 <= n_blocks; b += 4) {
    a0 = ScaledBlockDot<Isa>(w[b], x[b], a0);
    a1 = ScaledBlockDot<Isa>(w[b + 1], x[b + 1], a1);
    a2 = ScaledBlockDot<Isa>(w[b + 2], x[b + 2], a2);
    a3 = ScaledBlockDot<Isa>(w[b + 3], x[b + 3], a3);
  }
  for (; b < n_blocks; ++b) a0 = ScaledBlockDot<Isa>(w[b], x[b], a0);
  return Sum8<Isa>(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
}

// The row loop with the dot product inlined: small models have rows of only 64 weights,
// where a call per row costs as much as the row.
template <DotFn dot>
void Rows(const Matrix& w, const float* x, int row_begin, int row_end, float* y) {
  for (int r = row_begin; r < row_end; ++r) y[r] = dot(w.row(r), x, w.cols);
}

template <class Isa>
void RowsQ8_0(const Matrix& w, const ActivationBlock* x, int row_begin, int row_end, float* y) {
  for (int r = row_begin; r < row_end; ++r) y[r] = DotQ8_0<Isa>(w.row(r), x, w.cols);
}

template <class Isa>
void Gemv(const Matrix& w, const GemvInput& x, int row_begin, int row_end, float* y) {
  switch (w.type) {
    case WeightType::kF32: return Rows<Isa::kF32>(w, x.values, row_begin, row_end, y);
    case WeightType::kF16: return Rows<Isa::kF16>(w, x.values, row_begin, row_end, y);
    case WeightType::kBF16: return Rows<Isa::kBF16>(w, x.values, row_begin, row_end, y);
    case WeightType::kQ8_0: return RowsQ8_0<Isa>(w, x.blocks, row_begin, row_end, y);
  }
}

}  // namespace gemv_rows
}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_GEMV_ROWS_H_
