#include "runtime/kernels/gemv_kquant_avx512.h"

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/kernels/prefetch.h"
#include "runtime/kernels/row_streams.h"

#include "runtime/kernels/target_avx512_begin.h"

#include "runtime/kernels/gemv_rows.h"  // after the target: its helpers use the same target

namespace toyllm {
namespace {

struct Avx512K {};  // gemv_rows.h's helpers, compiled for this file's target

float HalfAt(const uint8_t* p) { return gemv_rows::HalfAt<Avx512K>(p); }

// The same 32 bytes in both halves of a register.
__m512i Twice(const uint8_t* p) {
  return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Per-16-bit-lane counts: `low` in the register's lower 32 bytes, `high` in its upper ones.
__m512i Halves16(int low, int high) {
  return _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(low)), _mm256_set1_epi16(static_cast<int16_t>(high)), 1);
}

// 16-bit lane i ← group first + i/8: the scales of four consecutive groups of 16, for the
// 32 pairs of products vpmaddubsw makes of 64 weights.
__m512i PairsOf16(int first) {
  return _mm512_add_epi16(_mm512_set1_epi16(static_cast<int16_t>(first)),
                          _mm512_srli_epi16(_mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16,
                                                             15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), 3));
}

__m512i Mask(uint8_t m) { return _mm512_set1_epi8(static_cast<char>(m)); }

float Sum8(__m256 v) { return gemv_rows::Sum8<Avx512K>(v); }

// Q4_K and Q5_K (32-groups with 6-bit scales and mins) take 128 weights from one 64-byte
// load of quants: the low nibbles are groups 4k and 4k + 2, the high nibbles groups 4k + 1
// and 4k + 3, so x is first copied into that order (NibbleOrder). vpmaddubsw multiplies the
// quants by the activations into pairs; vpdpwssd multiplies the pairs by their group's
// scale, shuffled into place from the block's eight, and adds them into int32 sums; one FMA
// a block applies d. 24 GB/s in cache instead of 19 with a 64-weight register per two groups
// and a float FMA per register (Zen 4).
void NibbleOrder(const ActivationBlockK* x, int blocks, int8_t* ordered) {
  constexpr int kFrom[4] = {0, 64, 32, 96};  // the 32 activations of each quarter of 128
  for (int b = 0; b < blocks; ++b) {
    for (int half = 0; half < 2; ++half) {
      for (int quarter = 0; quarter < 4; ++quarter) {
        std::memcpy(ordered + kSuperBlock * b + 128 * half + 32 * quarter, x[b].q + 128 * half + kFrom[quarter], 32);
      }
    }
  }
}

// vpshufb indices that fill the lower half of a register with group `low`'s 16-bit scale
// and the upper half with group `high`'s, from the eight scales repeated in every 128 bits.
__m512i ScalePicks(int low, int high) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(static_cast<int16_t>((2 * low + 1) << 8 | 2 * low))),
                            _mm256_set1_epi16(static_cast<int16_t>((2 * high + 1) << 8 | 2 * high)), 1);
}

// How far ahead of the block being read its row is prefetched. These kernels spend so long
// on each cache line that the processor's own prefetcher falls behind: from memory Q4_K
// read 19 GB/s of the 23 it reads in cache; 4 KiB ahead, 21.5 (Zen 4; 1 and 16 KiB gain
// less). Q6_K, with less work a byte, gains less: 23.3 -> 24.3 tok/s on a 1B Q6_K file.
constexpr int kPrefetchAhead = 4096;

// vpmultishiftqb's selectors for Q5_K's fifth bits of a register of quants: bit `low` of
// qh[l] for the lower 32 bytes, bit `high` for the upper, moved to bit 4 (one instruction
// where a variable shift and a shift back took two).
__m512i FifthBitSelect(int low, int high) {
  alignas(64) uint8_t select[64];
  for (int i = 0; i < 64; ++i) select[i] = static_cast<uint8_t>((8 * (i % 8) + (i < 32 ? low : high) - 4) & 63);
  return _mm512_load_si512(select);
}

// The rows' dot products with x, kRows rows in step (runtime/kernels/row_streams.h).
template <bool kFive, int kRows>
void DotK4(const RowsInStep& rows, const ActivationBlockK* x, const int8_t* ordered, int n) {
  constexpr size_t kScales = kFive ? offsetof(BlockQ5_K, scales) : offsetof(BlockQ4_K, scales);
  constexpr size_t kQs = kFive ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs);
  constexpr int kBytes = kFive ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
  const __m512i fifth[4] = {FifthBitSelect(0, 2), FifthBitSelect(1, 3), FifthBitSelect(4, 6), FifthBitSelect(5, 7)};
  __m512 acc[kRows];
  __m256 min_acc[kRows];
  for (int r = 0; r < kRows; ++r) {
    acc[r] = _mm512_setzero_ps();
    min_acc[r] = _mm256_setzero_ps();
  }
  for (int b = 0; b < n / kSuperBlock; ++b, ordered += kSuperBlock) {
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const uint8_t* p = rows.data + r * rows.bytes_apart + int64_t{b} * kBytes;
      PrefetchAhead(p, kBytes, kPrefetchAhead);
      // d and dmin, both halves at once, times the activations' scale.
      int32_t d_dmin_bits;
      std::memcpy(&d_dmin_bits, p, 4);
      const __m128 d_dmin = _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(d_dmin_bits)), _mm_set1_ps(x[b].scale));
      const __m128i scales_mins = gemv_rows::ScalesAndMinsK4<Avx512K>(p + kScales);
      // Σ min·x per group of 32, from the activations' sums of 16 (each min taken twice).
      const __m256i mins = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(scales_mins, scales_mins));
      const __m256i sums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].sums));
      min_acc[r] = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(_mm256_castps128_ps256(d_dmin), _mm256_set1_epi32(1)),
                                   _mm256_cvtepi32_ps(_mm256_madd_epi16(sums, mins)), min_acc[r]);
      const __m512i scales = _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(scales_mins));
      const __m512i qh = kFive ? Twice(p + offsetof(BlockQ5_K, qh)) : _mm512_setzero_si512();
      __m512i dot = _mm512_setzero_si512();
      for (int half = 0; half < 2; ++half) {  // groups 4·half .. 4·half + 3
        const __m512i q = _mm512_loadu_si512(p + kQs + 64 * half);
        __m512i low = _mm512_and_si512(q, Mask(0x0F));
        __m512i high = _mm512_and_si512(_mm512_srli_epi16(q, 4), Mask(0x0F));
        if (kFive) {  // bit 2j of qh[l] is weight 64j + l's, bit 2j + 1 weight 64j + 32 + l's
          low = _mm512_or_si512(low, _mm512_and_si512(_mm512_multishift_epi64_epi8(fifth[2 * half], qh), Mask(0x10)));
          high = _mm512_or_si512(high, _mm512_and_si512(_mm512_multishift_epi64_epi8(fifth[2 * half + 1], qh), Mask(0x10)));
        }
        const __m512i pairs_low = _mm512_maddubs_epi16(low, _mm512_loadu_si512(ordered + 128 * half));
        const __m512i pairs_high = _mm512_maddubs_epi16(high, _mm512_loadu_si512(ordered + 128 * half + 64));
        dot = _mm512_dpwssd_epi32(dot, pairs_low, _mm512_shuffle_epi8(scales, ScalePicks(4 * half, 4 * half + 2)));
        dot = _mm512_dpwssd_epi32(dot, pairs_high, _mm512_shuffle_epi8(scales, ScalePicks(4 * half + 1, 4 * half + 3)));
      }
      acc[r] = _mm512_fmadd_ps(_mm512_broadcastss_ps(d_dmin), _mm512_cvtepi32_ps(dot), acc[r]);
    }
  }
  for (int r = 0; r < kRows; ++r) rows.y[r * rows.step] = _mm512_reduce_add_ps(acc[r]) - Sum8(min_acc[r]);
}

// Q6_K (16-groups with int8 scales, weight = d·scale·(q − 32)): per half of 128 weights,
// 64 bytes of low nibbles and 32 of 2-bit pairs make two registers of 64 weights, scaled
// in integers as in DotK4 with the scales put in place by vpermw (33 GB/s in cache, 30
// with a float FMA per register).
template <int kRows>
void DotQ6_K(const RowsInStep& rows, const ActivationBlockK* x, int n) {
  const __m512i up_low = Halves16(4, 2), down_high = Halves16(0, 2);
  __m512 acc[kRows];
  __m256 offset_acc[kRows];
  for (int r = 0; r < kRows; ++r) {
    acc[r] = _mm512_setzero_ps();
    offset_acc[r] = _mm256_setzero_ps();
  }
  for (int b = 0; b < n / kSuperBlock; ++b) {
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const uint8_t* p = rows.data + r * rows.bytes_apart + int64_t{b} * sizeof(BlockQ6_K);
      PrefetchAhead(p, sizeof(BlockQ6_K), kPrefetchAhead);
      const float d = HalfAt(p + offsetof(BlockQ6_K, d)) * x[b].scale;
      const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + offsetof(BlockQ6_K, scales)));
      // 32 · Σ_g scale_g · (the group's Σ x): the offset, taken off once per block.
      const __m256i sums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].sums));
      const __m256i offsets = _mm256_madd_epi16(sums, _mm256_cvtepi8_epi16(packed));
      offset_acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(32.0f * d), _mm256_cvtepi32_ps(offsets), offset_acc[r]);
      const __m512i scales = _mm512_castsi256_si512(_mm256_cvtepi8_epi16(packed));
      __m512i dot = _mm512_setzero_si512();
      for (int half = 0; half < 2; ++half) {
        const __m512i low = _mm512_loadu_si512(p + offsetof(BlockQ6_K, ql) + 64 * half);
        const __m512i high = Twice(p + offsetof(BlockQ6_K, qh) + 32 * half);
        // Weights 128·half + 0..63: low nibbles, with qh's bits 0-1 (first 32) and 2-3.
        const __m512i first = _mm512_or_si512(_mm512_and_si512(low, Mask(0x0F)),
                                              _mm512_and_si512(_mm512_sllv_epi16(high, up_low), Mask(0x30)));
        // Weights 128·half + 64..127: high nibbles, with qh's bits 4-5 and 6-7.
        const __m512i second = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(low, 4), Mask(0x0F)),
                                               _mm512_and_si512(_mm512_srlv_epi16(high, down_high), Mask(0x30)));
        const int8_t* xq = x[b].q + 128 * half;
        dot = _mm512_dpwssd_epi32(dot, _mm512_maddubs_epi16(first, _mm512_loadu_si512(xq)),
                                  _mm512_permutexvar_epi16(PairsOf16(8 * half), scales));
        dot = _mm512_dpwssd_epi32(dot, _mm512_maddubs_epi16(second, _mm512_loadu_si512(xq + 64)),
                                  _mm512_permutexvar_epi16(PairsOf16(8 * half + 4), scales));
      }
      acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(dot), acc[r]);
    }
  }
  for (int r = 0; r < kRows; ++r) rows.y[r * rows.step] = _mm512_reduce_add_ps(acc[r]) - Sum8(offset_acc[r]);
}

// Four streams, as the other GEMV kernels (row_streams.h): from memory on one Xeon (Emerald
// Rapids) core Q4_K rows 13.0 → 15.1 GB/s, Q5_K 12.7 → 15.4, Q6_K 13.5 → 14.6.
constexpr int kStreams = 4;

// x in NibbleOrder, copied once per call: a call covers many rows.
template <bool kFive>
void RowsK4(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y) {
  thread_local std::vector<int8_t> ordered;
  ordered.resize(w.cols);
  NibbleOrder(x, w.cols / kSuperBlock, ordered.data());
  InStreams<kStreams>(w, row_begin, row_end, y, [&](auto streams, const RowsInStep& rows) {
    DotK4<kFive, decltype(streams)::value>(rows, x, ordered.data(), w.cols);
  });
}

}  // namespace

void RowsQ4_KAvx512(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y) {
  RowsK4<false>(w, x, row_begin, row_end, y);
}

void RowsQ5_KAvx512(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y) {
  RowsK4<true>(w, x, row_begin, row_end, y);
}

void RowsQ6_KAvx512(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y) {
  InStreams<kStreams>(w, row_begin, row_end, y, [&](auto streams, const RowsInStep& rows) {
    DotQ6_K<decltype(streams)::value>(rows, x, w.cols);
  });
}

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
