// The few-row kernels whatever the vector width. few_rows_avx2.cc and few_rows_avx512.cc
// include it after their target pragma and instantiate Kernels<Isa>() with an `Isa` that has
//   using Vec; static constexpr int kLanes;       // floats per register
//   static constexpr int kMaxVecs;                // registers of a row one pass of Sums holds
//   static constexpr int kMaxDotRows;             // rows of a one block of Dots holds (≤ 4)
//   static constexpr bool kPrefetchValues;        // whether Sums prefetches the rows of b
//   Zero(), Set1(float), Load(const float*), LoadF16(const uint16_t*), Store(float*, Vec),
//   Fma(a, b, acc) = a·b + acc, Sum(Vec) → float, Sum4(a, b, c, d) → __m128 of the four sums.
// Rows of b are whole registers (FewRowsTake checks it).
#ifndef TOYLLM_RUNTIME_KERNELS_FEW_ROWS_SIMD_H_
#define TOYLLM_RUNTIME_KERNELS_FEW_ROWS_SIMD_H_

#include <algorithm>
#include <immintrin.h>

#include <cstdint>

#include "runtime/kernels/few_rows.h"
#include "runtime/kernels/prefetch.h"

namespace toyllm {
namespace few_rows {

// Cached rows (keys or values) asked for ahead of the one being read: 4 KiB of f32 at a
// head width of 64. The loads of one block would not keep enough lines in flight alone.
constexpr int kRowsAhead = 16;

// Elements e.. of a row of b as float32 lanes.
template <class Isa>
struct F32 {
  static constexpr int kBytes = 4;
  static typename Isa::Vec Load(const void* row, int e) { return Isa::Load(static_cast<const float*>(row) + e); }
};
template <class Isa>
struct F16 {
  static constexpr int kBytes = 2;
  static typename Isa::Vec Load(const void* row, int e) { return Isa::LoadF16(static_cast<const uint16_t*>(row) + e); }
};

// Rows [j, j + 4) of b (four cached keys) times kRows rows of a (queries): 4·kRows dot
// products, each key register loaded once for all kRows queries. The four dot products of
// a query end in one horizontal sum (Isa::Sum4), which costs about as much as one.
template <class Isa, class B, int kRows>
void DotsBlock(float alpha, const float* a, int lda, const Matrix& b, int j, float* c, int ldc) {
  using Vec = typename Isa::Vec;
  const void* keys[4] = {b.row(j), b.row(j + 1), b.row(j + 2), b.row(j + 3)};
  Vec acc[kRows][4];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int t = 0; t < 4; ++t) acc[r][t] = Isa::Zero();
  }
  for (int e = 0; e < b.cols; e += Isa::kLanes) {
    Vec k[4];
#pragma GCC unroll 4
    for (int t = 0; t < 4; ++t) k[t] = B::Load(keys[t], e);
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const Vec x = Isa::Load(a + r * lda + e);
#pragma GCC unroll 4
      for (int t = 0; t < 4; ++t) acc[r][t] = Isa::Fma(k[t], x, acc[r][t]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    const __m128 dots = Isa::Sum4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
    _mm_storeu_ps(c + r * ldc + j, _mm_mul_ps(_mm_set1_ps(alpha), dots));
  }
}

using DotsBlockFn = void (*)(float alpha, const float* a, int lda, const Matrix& b, int j, float* c, int ldc);

// Each row of b is read from memory once, for all m rows of a (the group's queries); the
// next keys are prefetched, as the loads of one block would not keep enough lines in flight.
template <class Isa, class B>
void Dots(int m, float alpha, const float* a, int lda, const Matrix& b, float* c, int ldc) {
  static constexpr DotsBlockFn kBlocks[4] = {DotsBlock<Isa, B, 1>, DotsBlock<Isa, B, 2>, DotsBlock<Isa, B, 3>,
                                             DotsBlock<Isa, B, 4>};
  int j = 0;
  for (; j + 4 <= b.rows; j += 4) {
    if (j + kRowsAhead + 4 <= b.rows) PrefetchAhead(b.row(j + kRowsAhead), static_cast<int>(4 * b.row_stride()), 0);
    for (int i = 0; i < m; i += Isa::kMaxDotRows) {
      kBlocks[std::min(Isa::kMaxDotRows, m - i) - 1](alpha, a + i * lda, lda, b, j, c + i * ldc, ldc);
    }
  }
  for (; j < b.rows; ++j) {  // the last keys, one at a time
    const void* row = b.row(j);
    for (int i = 0; i < m; ++i) {
      typename Isa::Vec acc = Isa::Zero();
      for (int e = 0; e < b.cols; e += Isa::kLanes) acc = Isa::Fma(B::Load(row, e), Isa::Load(a + i * lda + e), acc);
      c[i * ldc + j] = alpha * Isa::Sum(acc);
    }
  }
}

// kRows rows of c, kVecs registers wide from element e0, held in registers while every
// row of b (a cached value) goes by once.
template <class Isa, class B, int kRows, int kVecs>
void SumsBlock(const float* a, int lda, const Matrix& b, int e0, float* c, int ldc) {
  using Vec = typename Isa::Vec;
  constexpr int kLanes = Isa::kLanes;
  Vec acc[kRows][kVecs];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int u = 0; u < kVecs; ++u) acc[r][u] = Isa::Zero();
  }
  // The values prefetched where Isa::kPrefetchValues, as Dots does its keys: without it,
  // one Zen 5 thread read an f32 cache's values at half the rate it read the keys (110M
  // q8_0 at depth 4096: 48–49 tokens/s, 56–60 with it).
  const int ahead_bytes = static_cast<int>(kRowsAhead * b.row_stride());
  const int block_offset = e0 * B::kBytes;
  for (int j = 0; j < b.rows; ++j) {
    const void* row = b.row(j);
    if (Isa::kPrefetchValues && j + kRowsAhead < b.rows) PrefetchAhead(static_cast<const char*>(row) + block_offset, kVecs * kLanes * B::kBytes, ahead_bytes);
    Vec v[kVecs];
#pragma GCC unroll 4
    for (int u = 0; u < kVecs; ++u) v[u] = B::Load(row, e0 + u * kLanes);
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const Vec w = Isa::Set1(a[r * lda + j]);
#pragma GCC unroll 4
      for (int u = 0; u < kVecs; ++u) acc[r][u] = Isa::Fma(w, v[u], acc[r][u]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int u = 0; u < kVecs; ++u) Isa::Store(c + r * ldc + e0 + u * kLanes, acc[r][u]);
  }
}

using SumsBlockFn = void (*)(const float* a, int lda, const Matrix& b, int e0, float* c, int ldc);

template <class Isa, class B, int kRows>
constexpr SumsBlockFn kSumsRows[4] = {SumsBlock<Isa, B, kRows, 1>, SumsBlock<Isa, B, kRows, 2>,
                                      SumsBlock<Isa, B, kRows, 3>, SumsBlock<Isa, B, kRows, 4>};

// Blocks of up to 4 rows × kMaxVecs registers: each block is one pass over b.
template <class Isa, class B>
void Sums(int m, const float* a, int lda, const Matrix& b, float* c, int ldc) {
  static constexpr const SumsBlockFn* kBlocks[4] = {kSumsRows<Isa, B, 1>, kSumsRows<Isa, B, 2>,
                                                    kSumsRows<Isa, B, 3>, kSumsRows<Isa, B, 4>};
  const int vecs = b.cols / Isa::kLanes;
  for (int i = 0; i < m; i += 4) {
    const int rows = std::min(4, m - i);
    for (int u = 0; u < vecs; u += Isa::kMaxVecs) {
      const int width = std::min(Isa::kMaxVecs, vecs - u);
      kBlocks[rows - 1][width - 1](a + i * lda, lda, b, u * Isa::kLanes, c + i * ldc, ldc);
    }
  }
}

template <class Isa>
constexpr FewRowsKernels Kernels() {
  return {[](int m, float alpha, const float* a, int lda, const Matrix& b, float* c, int ldc) {
            b.type == WeightType::kF16 ? Dots<Isa, F16<Isa>>(m, alpha, a, lda, b, c, ldc)
                                       : Dots<Isa, F32<Isa>>(m, alpha, a, lda, b, c, ldc);
          },
          [](int m, const float* a, int lda, const Matrix& b, float* c, int ldc) {
            b.type == WeightType::kF16 ? Sums<Isa, F16<Isa>>(m, a, lda, b, c, ldc)
                                       : Sums<Isa, F32<Isa>>(m, a, lda, b, c, ldc);
          }};
}

}  // namespace few_rows
}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_FEW_ROWS_SIMD_H_
