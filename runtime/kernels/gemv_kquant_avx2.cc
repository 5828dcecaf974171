#include "runtime/kernels/gemv_kquant_avx2.h"

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "runtime/kernels/prefetch.h"

#include "runtime/kernels/target_avx2_begin.h"

#include "runtime/kernels/gemv_rows.h"  // after the target: its helpers use the same target

namespace toyllm {
namespace {

struct Avx2K {};  // gemv_rows.h's helpers, compiled for this file's target

__m256i Load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Q4_K and Q5_K: weight = d·scale·q − dmin·min, 32-groups with 6-bit scales and mins.
template <bool kFive>
float DotQ45_K(const uint8_t* row, const ActivationBlockK* x, int n) {
  using Block = std::conditional_t<kFive, BlockQ5_K, BlockQ4_K>;
  __m256 acc = _mm256_setzero_ps();
  for (int b = 0; b < n / kSuperBlock; ++b) {
    const uint8_t* p = row + int64_t{b} * sizeof(Block);
    PrefetchAhead(p, sizeof(Block), gemv_rows::kPrefetchAhead);
    const __m128i scales_mins = gemv_rows::ScalesAndMinsK4<Avx2K>(p + offsetof(Block, scales));
    // Word c of each half scale c, what ScaledChunkDot picks for chunk c; each min twice,
    // for its two groups of 16.
    const __m256i by_chunk = _mm256_permute4x64_epi64(_mm256_cvtepu8_epi16(scales_mins), _MM_SHUFFLE(1, 0, 1, 0));
    const __m256i mins = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(scales_mins, scales_mins));
    const __m256i qh = kFive ? Load(p + offsetof(BlockQ5_K, qh)) : _mm256_setzero_si256();
    __m256i dot = _mm256_setzero_si256();
    for (int k = 0; k < 4; ++k) {
      __m256i first, second;
      gemv_rows::NibblePair<Avx2K, kFive>(p + offsetof(Block, qs), qh, k, &first, &second);
      dot = _mm256_add_epi32(dot, gemv_rows::ScaledChunkDot<Avx2K>(first, x[b], 2 * k, by_chunk));
      dot = _mm256_add_epi32(dot, gemv_rows::ScaledChunkDot<Avx2K>(second, x[b], 2 * k + 1, by_chunk));
    }
    const __m256i min_sums = _mm256_madd_epi16(Load(x[b].sums), mins);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(gemv_rows::HalfAt<Avx2K>(p) * x[b].scale), _mm256_cvtepi32_ps(dot), acc);
    acc = _mm256_fnmadd_ps(_mm256_set1_ps(gemv_rows::HalfAt<Avx2K>(p + 2) * x[b].scale), _mm256_cvtepi32_ps(min_sums), acc);
  }
  return gemv_rows::Sum8<Avx2K>(acc);
}

// Q6_K: weight = d·scale·(q − 32), q six bits, 16-groups with int8 scales.
float DotQ6_K(const uint8_t* row, const ActivationBlockK* x, int n) {
  __m256 acc = _mm256_setzero_ps();
  for (int b = 0; b < n / kSuperBlock; ++b) {
    const uint8_t* p = row + int64_t{b} * sizeof(BlockQ6_K);
    PrefetchAhead(p, sizeof(BlockQ6_K), gemv_rows::kPrefetchAhead);
    const __m256i scales = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + offsetof(BlockQ6_K, scales))));
    const __m256i by_chunk = gemv_rows::ScalesByChunk<Avx2K>(scales);
    // The offset, 32·Σ_g scale_g·(the group's Σx), taken off once a block.
    __m256i dot = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(Load(x[b].sums), scales), 5));
    for (int half = 0; half < 2; ++half) {
      __m256i q[4];
      gemv_rows::Q6_KHalf<Avx2K>(p, half, q);
      for (int j = 0; j < 4; ++j) dot = _mm256_add_epi32(dot, gemv_rows::ScaledChunkDot<Avx2K>(q[j], x[b], 4 * half + j, by_chunk));
    }
    const float d = gemv_rows::HalfAt<Avx2K>(p + offsetof(BlockQ6_K, d)) * x[b].scale;
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(dot), acc);
  }
  return gemv_rows::Sum8<Avx2K>(acc);
}

// One row after another, each prefetched ahead. Reading them as four streams instead (a
// whole row of each in turn, or four rows in step as the AVX-512 kernels do) was slower on
// a Zen 5 running this path.
template <class RowDot>
void Rows(const Matrix& w, int row_begin, int row_end, float* y, RowDot dot) {
  for (int r = row_begin; r < row_end; ++r) y[r] = dot(static_cast<const uint8_t*>(w.row(r)));
}

}  // namespace

void RowsQ4_KAvx2(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y) {
  Rows(w, row_begin, row_end, y, [&](const uint8_t* row) { return DotQ45_K<false>(row, x, w.cols); });
}

void RowsQ5_KAvx2(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y) {
  Rows(w, row_begin, row_end, y, [&](const uint8_t* row) { return DotQ45_K<true>(row, x, w.cols); });
}

void RowsQ6_KAvx2(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y) {
  Rows(w, row_begin, row_end, y, [&](const uint8_t* row) { return DotQ6_K(row, x, w.cols); });
}

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
