#include "runtime/kernels/gemv_kquant_avx512.h"

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
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
// and 4k + 3, so x is first copied into that order (NibbleActivations). vpmaddubsw
// multiplies the quants by the activations into pairs; vpdpwssd multiplies the pairs by
// their group's scale, shuffled into place from the block's eight, and adds them into int32
// sums; one FMA a block applies d. 24 GB/s in cache instead of 19 with a 64-weight register
// per two groups and a float FMA per register (Zen 4).
struct NibbleActivations {
  std::vector<int8_t> q;             // each super-block's values in the nibbles' order
  std::vector<int16_t> group_sums;   // Σx of each group of 32, eight a super-block
};

void OrderByNibbles(const ActivationBlockK* x, int blocks, NibbleActivations* ordered) {
  constexpr int kFrom[4] = {0, 64, 32, 96};  // the 32 activations of each quarter of 128
  ordered->q.resize(static_cast<size_t>(kSuperBlock) * blocks);
  ordered->group_sums.resize(static_cast<size_t>(8) * blocks);
  for (int b = 0; b < blocks; ++b) {
    for (int half = 0; half < 2; ++half) {
      for (int quarter = 0; quarter < 4; ++quarter) {
        std::memcpy(ordered->q.data() + kSuperBlock * b + 128 * half + 32 * quarter, x[b].q + 128 * half + kFrom[quarter], 32);
      }
    }
    for (int g = 0; g < 8; ++g) ordered->group_sums[8 * b + g] = static_cast<int16_t>(x[b].sums[2 * g] + x[b].sums[2 * g + 1]);
  }
}

// Calls f(std::integral_constant<int, r>()) for r = 0 .. kRows − 1: a row's number as a
// constant, for the instructions that take a lane as an immediate.
template <class F, int... kRow>
void ForEachRow(F f, std::integer_sequence<int, kRow...>) {
  (f(std::integral_constant<int, kRow>()), ...);
}
template <int kRows, class F>
void ForEachRow(F f) {
  ForEachRow(f, std::make_integer_sequence<int, kRows>());
}

// The first 16 bytes of block `offset` of each row — d, dmin and the 12 bytes of packed
// scales and mins, the same in Q4_K and Q5_K — row r's in 128-bit lane r. The four rows'
// scales are then unpacked together, not one row at a time.
template <int kRows>
__m512i HeadsOf(const RowsInStep& rows, int64_t offset) {
  static_assert(kRows == 1 || kRows == 4, "one row, or four in step");
  const auto head = [&](int r) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows.data + r * rows.bytes_apart + offset));
  };
  __m512i heads = _mm512_zextsi128_si512(head(0));
  if constexpr (kRows == 4) {
    heads = _mm512_inserti32x4(heads, head(1), 1);
    heads = _mm512_inserti32x4(heads, head(2), 2);
    heads = _mm512_inserti32x4(heads, head(3), 3);
  }
  return heads;
}

// gemv_rows.h's ScalesAndMinsK4 on four heads at once: in each 128-bit lane, bytes 0..7 the
// row's scales and 8..15 its mins. The packed bytes start at byte 4 of a head: for i < 4,
// scale i and min i are the low 6 bits of bytes 4 + i and 8 + i, and scale and min 4 + i
// the nibbles of byte 12 + i, their top two bits the top bits of bytes 4 + i and 8 + i.
__m512i ScalesAndMins(__m512i heads) {
  const __m512i low = _mm512_shuffle_epi8(heads, _mm512_broadcast_i32x4(_mm_setr_epi8(4, 5, 6, 7, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15)));
  const __m512i top = _mm512_shuffle_epi8(heads, _mm512_broadcast_i32x4(_mm_setr_epi8(-1, -1, -1, -1, 4, 5, 6, 7, -1, -1, -1, -1, 8, 9, 10, 11)));
  // The mins of 4..7 are byte 12 + i's high nibble: words 6 and 7 of each lane shifted down by 4.
  const __m512i low_bits = _mm512_and_si512(_mm512_mask_blend_epi16(0xC0C0C0C0, low, _mm512_srli_epi16(low, 4)),
                                            _mm512_broadcast_i32x4(_mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15)));
  return _mm512_or_si512(low_bits, _mm512_and_si512(_mm512_srli_epi16(top, 2), _mm512_set1_epi8(0x30)));
}

// vpshufb indices that fill the lower half of a register with group `low`'s scale as 16-bit
// words and the upper half with group `high`'s, from a row's unpacked scales and mins
// repeated in every 128-bit lane (an index with its top bit set makes a zero byte).
__m512i ScalePicks(int low, int high) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(static_cast<int16_t>(0x8000 | low))),
                            _mm256_set1_epi16(static_cast<int16_t>(0x8000 | high)), 1);
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

// The rows' dot products with x, kRows rows in step (runtime/kernels/row_streams.h). The
// rows' d, dmin, scales and mins are unpacked together, a block of each at a time, and
// their mins met with x's group sums in one madd, where each row did its own: in cache
// Q4_K rows 38 → 45 GB/s, Q5_K 38 → 45 (Zen 5).
template <bool kFive, int kRows>
void DotK4(const RowsInStep& rows, const ActivationBlockK* x, const NibbleActivations& xn, int n) {
  constexpr size_t kQs = kFive ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs);
  constexpr int kBytes = kFive ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
  const __m512i fifth[4] = {FifthBitSelect(0, 2), FifthBitSelect(1, 3), FifthBitSelect(4, 6), FifthBitSelect(5, 7)};
  // Dword 0 of each head (d and dmin) to the low four dwords; the eight mins of each lane
  // as 16-bit words; dmin of row r in float lanes 4r .. 4r + 3.
  const __m512i first_dwords = _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i min_words = _mm512_broadcast_i32x4(_mm_setr_epi8(8, -1, 9, -1, 10, -1, 11, -1, 12, -1, 13, -1, 14, -1, 15, -1));
  const __m512i dmin_lanes = _mm512_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3, 5, 5, 5, 5, 7, 7, 7, 7);
  __m512 acc[kRows];
  for (int r = 0; r < kRows; ++r) acc[r] = _mm512_setzero_ps();
  __m512 min_acc = _mm512_setzero_ps();  // row r's Σ dmin·min·x in lanes 4r .. 4r + 3
  for (int b = 0; b < n / kSuperBlock; ++b) {
    const __m512i heads = HeadsOf<kRows>(rows, int64_t{b} * kBytes);
    const __m512i scales_mins = ScalesAndMins(heads);
    // (d, dmin) of rows 0, 1, 2, 3 in turn, times the activations' scale.
    const __m256i halves = _mm512_castsi512_si256(_mm512_permutexvar_epi32(first_dwords, heads));
    const __m512 d_dmin = _mm512_castps256_ps512(_mm256_mul_ps(_mm256_cvtph_ps(_mm256_castsi256_si128(halves)), _mm256_set1_ps(x[b].scale)));
    // Σ min·x per pair of groups: each lane's mins against the eight group sums.
    const __m512i sums = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xn.group_sums.data() + 8 * b)));
    min_acc = _mm512_fmadd_ps(_mm512_permutexvar_ps(dmin_lanes, d_dmin),
                              _mm512_cvtepi32_ps(_mm512_madd_epi16(_mm512_shuffle_epi8(scales_mins, min_words), sums)), min_acc);
    const int8_t* ordered = xn.q.data() + int64_t{b} * kSuperBlock;
    ForEachRow<kRows>([&](auto row) {
      constexpr int r = decltype(row)::value;
      const uint8_t* p = rows.data + r * rows.bytes_apart + int64_t{b} * kBytes;
      PrefetchAhead(p, kBytes, kPrefetchAhead);
      const __m512i scales = _mm512_shuffle_i32x4(scales_mins, scales_mins, 0x55 * r);  // row r's in every lane
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
      acc[r] = _mm512_fmadd_ps(_mm512_permutexvar_ps(_mm512_set1_epi32(2 * r), d_dmin), _mm512_cvtepi32_ps(dot), acc[r]);
    });
  }
  alignas(64) float mins[16];
  _mm512_store_ps(mins, min_acc);
  for (int r = 0; r < kRows; ++r) {
    rows.y[r * rows.step] = _mm512_reduce_add_ps(acc[r]) - (mins[4 * r] + mins[4 * r + 1] + mins[4 * r + 2] + mins[4 * r + 3]);
  }
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

// x in the nibbles' order, copied once per call: a call covers many rows.
template <bool kFive>
void RowsK4(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y) {
  thread_local NibbleActivations ordered;
  OrderByNibbles(x, w.cols / kSuperBlock, &ordered);
  InStreams<kStreams>(w, row_begin, row_end, y, [&](auto streams, const RowsInStep& rows) {
    DotK4<kFive, decltype(streams)::value>(rows, x, ordered, w.cols);
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
