#include "runtime/kernels/gemv_kquant_avx512.h"

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

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

// Permutation indices: `low` in the lower eight float lanes, `high` in the upper ones.
__m512i Halves32(int low, int high) {
  return _mm512_inserti64x4(_mm512_set1_epi32(low), _mm256_set1_epi32(high), 1);
}

// Lane i ← group first + i/4: the scales of four consecutive groups of 16, lane by lane.
__m512i GroupsOf16(int first) {
  return _mm512_add_epi32(_mm512_set1_epi32(first), _mm512_srli_epi32(
      _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), 2));
}

__m512i Mask(uint8_t m) { return _mm512_set1_epi8(static_cast<char>(m)); }

// The integer products of 64 unsigned quants and 64 activations: 16 sums of four.
__m512i Dot64(__m512i q, const int8_t* x) {
  return _mm512_dpbusd_epi32(_mm512_setzero_si512(), q, _mm512_loadu_si512(x));
}

float Sum8(__m256 v) { return gemv_rows::Sum8<Avx512K>(v); }

// Q4_K and Q5_K (32-groups with 6-bit scales and mins): 64 weights from the quants of 32
// bytes, low nibbles first; Q5_K adds each weight's fifth bit from the qh plane.
template <bool kFive>
float DotK4(const uint8_t* p, const ActivationBlockK* x, int n) {
  constexpr size_t kScales = kFive ? offsetof(BlockQ5_K, scales) : offsetof(BlockQ4_K, scales);
  constexpr size_t kQs = kFive ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs);
  constexpr int kBytes = kFive ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
  const __m512i nibbles = Halves16(0, 4);
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  __m256 min_acc = _mm256_setzero_ps();
  for (int b = 0; b < n / kSuperBlock; ++b, p += kBytes) {
    const float d = HalfAt(p) * x[b].scale, dmin = HalfAt(p + 2) * x[b].scale;
    const __m128i scales_mins = gemv_rows::ScalesAndMinsK4<Avx512K>(p + kScales);
    // Σ min·x per group of 32, from the activations' sums of 16 (each min taken twice).
    const __m256i mins = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(scales_mins, scales_mins));
    const __m256i sums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].sums));
    min_acc = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(_mm256_madd_epi16(sums, mins)), min_acc);
    const __m512 scales = _mm512_castps256_ps512(
        _mm256_mul_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(scales_mins))));
    const __m512i high = kFive ? Twice(p + offsetof(BlockQ5_K, qh)) : _mm512_setzero_si512();
    for (int j = 0; j < 4; ++j) {  // weights 64j .. 64j + 63: groups 2j and 2j + 1
      __m512i q = _mm512_and_si512(_mm512_srlv_epi16(Twice(p + kQs + 32 * j), nibbles), Mask(0x0F));
      if (kFive) {  // bit 2j of qh[l] is weight 64j + l's, bit 2j + 1 weight 64j + 32 + l's
        const __m512i bit = _mm512_srlv_epi16(high, Halves16(2 * j, 2 * j + 1));
        q = _mm512_or_si512(q, _mm512_and_si512(_mm512_slli_epi16(bit, 4), Mask(0x10)));
      }
      const __m512 lane_scale = _mm512_permutexvar_ps(Halves32(2 * j, 2 * j + 1), scales);
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(Dot64(q, x[b].q + 64 * j)), lane_scale, acc[j]);
    }
  }
  const __m512 total = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3]));
  return _mm512_reduce_add_ps(total) - Sum8(min_acc);
}

// Q6_K (16-groups with int8 scales, weight = d·scale·(q − 32)): per half of 128 weights,
// 64 bytes of low nibbles and 32 of 2-bit pairs make two registers of 64 weights.
float DotQ6_K(const uint8_t* p, const ActivationBlockK* x, int n) {
  const __m512i up_low = Halves16(4, 2), down_high = Halves16(0, 2);
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  __m256 offset_acc = _mm256_setzero_ps();
  for (int b = 0; b < n / kSuperBlock; ++b, p += sizeof(BlockQ6_K)) {
    const float d = HalfAt(p + offsetof(BlockQ6_K, d)) * x[b].scale;
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + offsetof(BlockQ6_K, scales)));
    // 32 · Σ_g scale_g · (the group's Σ x): the offset, taken off once per block.
    const __m256i sums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].sums));
    const __m256i offsets = _mm256_madd_epi16(sums, _mm256_cvtepi8_epi16(packed));
    offset_acc = _mm256_fmadd_ps(_mm256_set1_ps(32.0f * d), _mm256_cvtepi32_ps(offsets), offset_acc);
    const __m512 scales = _mm512_mul_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(packed)));
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
      acc[2 * half] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(Dot64(first, xq)),
                                      _mm512_permutexvar_ps(GroupsOf16(8 * half), scales), acc[2 * half]);
      acc[2 * half + 1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(Dot64(second, xq + 64)),
                                          _mm512_permutexvar_ps(GroupsOf16(8 * half + 4), scales), acc[2 * half + 1]);
    }
  }
  const __m512 total = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3]));
  return _mm512_reduce_add_ps(total) - Sum8(offset_acc);
}

template <float (*kDot)(const uint8_t*, const ActivationBlockK*, int)>
void Rows(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y) {
  for (int r = row_begin; r < row_end; ++r) y[r] = kDot(static_cast<const uint8_t*>(w.row(r)), x, w.cols);
}

}  // namespace

void RowsQ4_KAvx512(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y) {
  Rows<DotK4<false>>(w, x, row_begin, row_end, y);
}

void RowsQ5_KAvx512(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y) {
  Rows<DotK4<true>>(w, x, row_begin, row_end, y);
}

void RowsQ6_KAvx512(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y) {
  Rows<DotQ6_K>(w, x, row_begin, row_end, y);
}

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
