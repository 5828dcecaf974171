#include "runtime/kernels/gemv_legacy_avx512.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/kernels/prefetch.h"
#include "runtime/quant_blocks.h"

#include "runtime/kernels/target_avx512_begin.h"

namespace toyllm {
namespace {

float HalfAt(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  return _cvtsh_ss(bits);
}

// a in the lower eight float lanes, b in the upper eight.
__m512 Halves(float a, float b) {
  return _mm512_mask_broadcastss_ps(_mm512_set1_ps(a), 0xFF00, _mm_set_ss(b));
}

__m128i Load16(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }

template <WeightType kType>
struct Layout {
  static constexpr bool kSigned = kType == WeightType::kQ8_0;  // whole int8 quants
  static constexpr bool kMin = kType == WeightType::kQ4_1 || kType == WeightType::kQ5_1;
  static constexpr bool kFive = kType == WeightType::kQ5_0 || kType == WeightType::kQ5_1;
  static constexpr int kOffset = kSigned || kMin ? 0 : kFive ? 16 : 8;  // weight = d·(q − offset) (+ m)
  static constexpr int kQh = kMin ? 4 : 2;                              // after d (and m)
  static constexpr int kQs = kQh + (kFive ? 4 : 0);
  static constexpr int kBytes = BlockShapeOf(kType).bytes;
};

// Two blocks' 32 values each, side by side in one register.
__m512i Pair32(const void* a, const void* b) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(static_cast<const __m256i*>(a))),
                            _mm256_loadu_si256(static_cast<const __m256i*>(b)), 1);
}

// The integer dot products of both blocks' quants with the activations', eight sums each.
template <WeightType kType>
__m512i PairQuantDot(const uint8_t* w0, const uint8_t* w1, __m512i xq) {
  using L = Layout<kType>;
  if (L::kSigned) {
    // vpdpbusd multiplies unsigned bytes by signed ones: |w| times x with w's sign moved
    // onto it is the same product (|−128| = 128 as an unsigned byte).
    const __m512i q = Pair32(w0 + L::kQs, w1 + L::kQs);
    const __mmask64 negative = _mm512_movepi8_mask(q);
    const __m512i signed_x = _mm512_mask_sub_epi8(xq, negative, _mm512_setzero_si512(), xq);
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(q), signed_x);
  }
  // Nibbles: 128-bit lanes hold block 0's weights 0..15 and 16..31, then block 1's.
  const __m512i packed = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_broadcastsi128_si256(Load16(w0 + L::kQs))),
                                            _mm256_broadcastsi128_si256(Load16(w1 + L::kQs)), 1);
  constexpr int64_t kFour = 0x0004000400040004;  // per 128-bit lane: shift 0, 4, 0, 4
  const __m512i shifts = _mm512_set_epi64(kFour, kFour, 0, 0, kFour, kFour, 0, 0);
  __m512i q = _mm512_and_si512(_mm512_srlv_epi16(packed, shifts), _mm512_set1_epi8(0x0F));
  if (L::kFive) {  // bit i of qh is weight i's fifth bit: a mask, one bit per byte lane
    uint32_t h0, h1;
    std::memcpy(&h0, w0 + L::kQh, 4);
    std::memcpy(&h1, w1 + L::kQh, 4);
    q = _mm512_mask_add_epi8(q, h0 | uint64_t{h1} << 32, q, _mm512_set1_epi8(0x10));
  }
  // Σ (q − offset)·x = Σ q·x − offset·Σ x: vpdpbusd multiplies unsigned bytes only.
  __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q, xq);
  if (L::kOffset != 0) {
    dot = _mm512_sub_epi32(dot, _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(L::kOffset), xq));
  }
  return dot;
}

// Blocks w0 and w1 times activation blocks x0 and x1 added to acc; `second` = 0 makes the
// pair a single block (a row's odd tail). For the types with a min m, m·Σx is added to
// *min_total from the blocks' activation sums sum0 and sum1.
template <WeightType kType>
void PairDot(const uint8_t* w0, const uint8_t* w1, const ActivationBlock& x0, const ActivationBlock& x1,
             float sum0, float sum1, float second, __m512* acc, float* min_total) {
  using L = Layout<kType>;
  const __m512i dot = PairQuantDot<kType>(w0, w1, Pair32(x0.q, x1.q));
  const __m512 scales = Halves(HalfAt(w0) * x0.scale, HalfAt(w1) * x1.scale * second);
  *acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scales, *acc);
  if (L::kMin) *min_total += HalfAt(w0 + 2) * sum0 + HalfAt(w1 + 2) * sum1 * second;
}

// Σx of each activation block (its scale times the sum of its quants): the same for every
// row, so the types with a min take m·Σx from here instead of a second product per block.
const float* BlockSums(const ActivationBlock* x, int n_blocks) {
  thread_local std::vector<float> sums;
  sums.resize(n_blocks);
  for (int b = 0; b < n_blocks; ++b) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].q));
    const __m256i pairs = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), q), _mm256_set1_epi16(1));
    const __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256(pairs, 1));
    const __m128i s2 = _mm_add_epi32(s4, _mm_unpackhi_epi64(s4, s4));
    sums[b] = x[b].scale * static_cast<float>(_mm_cvtsi128_si32(_mm_add_epi32(s2, _mm_shuffle_epi32(s2, 1))));
  }
  return sums.data();
}

// How far ahead of the blocks being read their row is prefetched (runtime/kernels/
// prefetch.h): without it, Q8_0 rows of llama3.2-1b read 7.9 GB/s from memory on one
// thread of an Intel Xeon (Emerald Rapids) whose DRAM delivers 15; decode 6.3 → 9.6 tok/s
// with 4 KiB ahead, 12.0 → 17.4–18.1 on two threads; 1 and 2 KiB gained less, 8 KiB no more.
constexpr int kPrefetchAhead = 4096;

template <WeightType kType>
float Dot(const uint8_t* p, const ActivationBlock* x, const float* x_sums, int n) {
  constexpr int kBytes = Layout<kType>::kBytes;
  const int n_blocks = n / kQ8Block;
  __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
  float min_total = 0.0f;
  const auto pair = [&](int b, int next, float second, __m512* into) {
    // x_sums is null for the types without a min; a tail pair reads block b twice.
    const float sum0 = Layout<kType>::kMin ? x_sums[b] : 0.0f;
    const float sum1 = Layout<kType>::kMin ? x_sums[next] : 0.0f;
    PairDot<kType>(p + b * kBytes, p + next * kBytes, x[b], x[next], sum0, sum1, second, into, &min_total);
  };
  int b = 0;
  for (; b + 4 <= n_blocks; b += 4) {  // two accumulators, so that no FMA waits on the last
    PrefetchAhead(p + b * kBytes, 4 * kBytes, kPrefetchAhead);
    pair(b, b + 1, 1.0f, &acc[0]);
    pair(b + 2, b + 3, 1.0f, &acc[1]);
  }
  for (; b + 2 <= n_blocks; b += 2) pair(b, b + 1, 1.0f, &acc[0]);
  if (b < n_blocks) pair(b, b, 0.0f, &acc[1]);
  return _mm512_reduce_add_ps(_mm512_add_ps(acc[0], acc[1])) + min_total;
}

template <WeightType kType>
void Rows(const Matrix& w, const ActivationBlock* x, int row_begin, int row_end, float* y) {
  const float* x_sums = Layout<kType>::kMin ? BlockSums(x, w.cols / kQ8Block) : nullptr;
  for (int r = row_begin; r < row_end; ++r) y[r] = Dot<kType>(static_cast<const uint8_t*>(w.row(r)), x, x_sums, w.cols);
}

}  // namespace

void RowsLegacyAvx512(const Matrix& w, const ActivationBlock* x, int row_begin, int row_end, float* y) {
  switch (w.type) {
    case WeightType::kQ4_0: return Rows<WeightType::kQ4_0>(w, x, row_begin, row_end, y);
    case WeightType::kQ5_0: return Rows<WeightType::kQ5_0>(w, x, row_begin, row_end, y);
    case WeightType::kQ4_1: return Rows<WeightType::kQ4_1>(w, x, row_begin, row_end, y);
    case WeightType::kQ5_1: return Rows<WeightType::kQ5_1>(w, x, row_begin, row_end, y);
    case WeightType::kQ8_0: return Rows<WeightType::kQ8_0>(w, x, row_begin, row_end, y);
    default: return;  // GemvAvx512 sends only these types
  }
}

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
