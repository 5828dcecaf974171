// What the SIMD GEMV paths share whatever their vector width: the walk over a row's Q8_0
// blocks and the row loop per weight type. gemv_avx2.cc and gemv_avx512.cc include it
// after their target pragma and instantiate Gemv<Isa> with an `Isa` that has:
//   using Vec;  static Vec Zero();  static Vec Add(Vec, Vec);  static float Sum(Vec);
//   static Vec BlockDot(const int8_t* q, float scale, const float* x, Vec acc);
//   static constexpr DotFn kF32, kF16, kBF16;  // a row of that type · x
#ifndef TOYLLM_RUNTIME_KERNELS_GEMV_ROWS_H_
#define TOYLLM_RUNTIME_KERNELS_GEMV_ROWS_H_

#include <immintrin.h>

#include <cstring>

#include "runtime/weights.h"

namespace toyllm {
namespace gemv_rows {

using DotFn = float (*)(const void* row, const float* x, int n);

// A block's f16 scale (F16C: both SIMD paths have it), read without assuming alignment.
// A template so that each instruction set compiles its own copy: one inline function
// compiled for two targets would leave the linker free to pick the AVX-512 one for both.
template <class Isa>
float BlockScale(const BlockQ8_0& block) {
  uint16_t bits;
  std::memcpy(&bits, &block.scale, sizeof(bits));
  return _cvtsh_ss(bits);
}

// Two accumulators on alternate blocks, so consecutive blocks' FMAs do not wait on each
// other.
template <class Isa>
float DotQ8_0(const void* row, const float* x, int n) {
  const BlockQ8_0* blocks = static_cast<const BlockQ8_0*>(row);
  const int n_blocks = n / kQ8Block;
  typename Isa::Vec a0 = Isa::Zero(), a1 = a0;
  int b = 0;
  for (; b + 2 <= n_blocks; b += 2) {
    a0 = Isa::BlockDot(blocks[b].q, BlockScale<Isa>(blocks[b]), x + b * kQ8Block, a0);
    a1 = Isa::BlockDot(blocks[b + 1].q, BlockScale<Isa>(blocks[b + 1]), x + (b + 1) * kQ8Block, a1);
  }
  if (b < n_blocks) a0 = Isa::BlockDot(blocks[b].q, BlockScale<Isa>(blocks[b]), x + b * kQ8Block, a0);
  return Isa::Sum(Isa::Add(a0, a1));
}

// The row loop with the dot product inlined: small models have rows of only 64 weights,
// where a call per row costs as much as the row.
template <DotFn dot>
void Rows(const Matrix& w, const float* x, int row_begin, int row_end, float* y) {
  for (int r = row_begin; r < row_end; ++r) y[r] = dot(w.row(r), x, w.cols);
}

template <class Isa>
void Gemv(const Matrix& w, const float* x, int row_begin, int row_end, float* y) {
  switch (w.type) {
    case WeightType::kF32: return Rows<Isa::kF32>(w, x, row_begin, row_end, y);
    case WeightType::kF16: return Rows<Isa::kF16>(w, x, row_begin, row_end, y);
    case WeightType::kBF16: return Rows<Isa::kBF16>(w, x, row_begin, row_end, y);
    case WeightType::kQ8_0: return Rows<DotQ8_0<Isa>>(w, x, row_begin, row_end, y);
  }
}

}  // namespace gemv_rows
}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_GEMV_ROWS_H_
