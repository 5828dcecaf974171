#include "runtime/kernels/gemv_legacy_avx512.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/kernels/prefetch.h"
#include "runtime/kernels/row_streams.h"
#include "runtime/quant_blocks.h"

#include "runtime/kernels/target_avx512_begin.h"

namespace toyllm {
namespace {

// weight = d·(q − offset) (+ m) for the unsigned q vpdpbusd multiplies; Q8_0's signed
// quants become unsigned with their top bit flipped, q + 128.
template <WeightType kType>
constexpr int kUnsignedOffset = kType == WeightType::kQ8_0 ? 128 : LegacyLayout<kType>::kOffset;

// a in the lower eight float lanes, b in the upper eight.
__m512 Halves(float a, float b) {
  return _mm512_mask_broadcastss_ps(_mm512_set1_ps(a), 0xFF00, _mm_set_ss(b));
}

// Two blocks' 32 bytes each, side by side in one register.
__m512i Pair32(const void* a, const void* b) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(static_cast<const __m256i*>(a))),
                            _mm256_loadu_si256(static_cast<const __m256i*>(b)), 1);
}

// The activations as every row of one product meets them, so that the work done once per
// pair of blocks is not done again for each row: per pair, the quants side by side, the
// accumulator's start (−offset · Σ of each lane's four quants, which takes the weights'
// offset off their dot product), each block's scale in its eight lanes and, for the types
// with a min, each block's Σx in its second lane (where the block's m lands, below).
struct alignas(64) PairedActivations {
  __m512i q, start;
  __m512 scale, sum;
};

template <WeightType kType>
const PairedActivations* Paired(const ActivationBlock* x, int n_blocks) {
  thread_local std::vector<PairedActivations> paired;
  paired.resize((n_blocks + 1) / 2);
  static const ActivationBlock kNone = {};  // an odd row's last block pairs with zeros
  for (int p = 0; p < static_cast<int>(paired.size()); ++p) {
    const ActivationBlock& x0 = x[2 * p];
    const ActivationBlock& x1 = 2 * p + 1 < n_blocks ? x[2 * p + 1] : kNone;
    paired[p].q = Pair32(x0.q, x1.q);
    const __m512i lane_sums = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(1), paired[p].q);
    paired[p].start = _mm512_mullo_epi32(lane_sums, _mm512_set1_epi32(-kUnsignedOffset<kType>));
    paired[p].scale = Halves(x0.scale, x1.scale);
    if (LegacyLayout<kType>::kMin) {
      const float sum0 = x0.scale * static_cast<float>(_mm512_mask_reduce_add_epi32(0x00FF, lane_sums));
      const float sum1 = x1.scale * static_cast<float>(_mm512_mask_reduce_add_epi32(0xFF00, lane_sums));
      paired[p].sum = _mm512_maskz_mov_ps(0x0202, Halves(sum0, sum1));
    }
  }
  return paired.data();
}

// 16 bytes, in both halves of a 256-bit register.
__m256i Twice16(const uint8_t* p) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Both blocks' quants as unsigned bytes, in the order of their weights.
template <WeightType kType>
__m512i PairQuants(const uint8_t* w0, const uint8_t* w1) {
  using L = LegacyLayout<kType>;
  if (kType == WeightType::kQ8_0) return _mm512_xor_si512(Pair32(w0 + L::kQs, w1 + L::kQs), _mm512_set1_epi8(-128));
  // Nibbles: 128-bit lanes hold block 0's weights 0..15 and 16..31, then block 1's.
  const __m512i packed = _mm512_inserti64x4(_mm512_castsi256_si512(Twice16(w0 + L::kQs)), Twice16(w1 + L::kQs), 1);
  constexpr int64_t kFour = 0x0004000400040004;  // per 128-bit lane: shift 0, 4, 0, 4
  const __m512i shifts = _mm512_set_epi64(kFour, kFour, 0, 0, kFour, kFour, 0, 0);
  const __m512i q = _mm512_and_si512(_mm512_srlv_epi16(packed, shifts), _mm512_set1_epi8(0x0F));
  if (!L::kFive) return q;
  uint32_t h0, h1;  // bit i of qh is weight i's fifth bit: a mask, one bit per byte lane
  std::memcpy(&h0, w0 + L::kQh, 4);
  std::memcpy(&h1, w1 + L::kQh, 4);
  return _mm512_mask_add_epi8(q, h0 | uint64_t{h1} << 32, q, _mm512_set1_epi8(0x10));
}

// The 32 bits at each block's start, d and (for the min types) m, as floats: d0 m0 d0 m0 …
// in the lower eight lanes, d1 m1 … in the upper. Broadcasting whole 32-bit words from
// memory costs no shuffle; the types without m carry two quants' bytes where m would be.
__m512 PairHeads(const uint8_t* w0, const uint8_t* w1) {
  int32_t h0, h1;
  std::memcpy(&h0, w0, 4);
  std::memcpy(&h1, w1, 4);
  return _mm512_cvtph_ps(_mm256_mask_set1_epi32(_mm256_set1_epi32(h0), 0xF0, h1));
}

// How far ahead of the blocks being read their row is prefetched (runtime/kernels/
// prefetch.h): without it, Q8_0 rows of llama3.2-1b read 7.9 GB/s from memory on one
// thread of an Intel Xeon (Emerald Rapids) whose DRAM delivers 15; decode 6.3 → 9.6 tok/s
// with 4 KiB ahead, 12.0 → 17.4–18.1 on two threads; 1 and 2 KiB gained less, 8 KiB no more.
constexpr int kPrefetchAhead = 4096;

// The rows' dot products with x, kRows rows in step (runtime/kernels/row_streams.h).
template <WeightType kType, int kRows>
void DotRows(const RowsInStep& rows, const PairedActivations* x, int n_blocks) {
  using L = LegacyLayout<kType>;
  __m512 acc[kRows][2], mins[kRows][2];
  for (int r = 0; r < kRows; ++r) {
    acc[r][0] = acc[r][1] = mins[r][0] = mins[r][1] = _mm512_setzero_ps();
  }
  // Pair p of row r: blocks 2p and b1 (2p + 1, or 2p again for an odd row's last, against zeros).
  const auto pair = [&](int r, int p, int b1, int into) {
    const uint8_t* row = rows.data + r * rows.bytes_apart;
    const uint8_t* w0 = row + 2 * p * L::kBytes;
    const uint8_t* w1 = row + b1 * L::kBytes;
    const __m512i dot = _mm512_dpbusd_epi32(x[p].start, PairQuants<kType>(w0, w1), x[p].q);
    const __m512 heads = PairHeads(w0, w1);
    const __m512 scales = _mm512_mul_ps(_mm512_moveldup_ps(heads), x[p].scale);
    acc[r][into] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scales, acc[r][into]);
    if (L::kMin) mins[r][into] = _mm512_fmadd_ps(heads, x[p].sum, mins[r][into]);  // m·Σx; d·0
  };
  const int n_pairs = n_blocks / 2;
  int p = 0;
  for (; p + 2 <= n_pairs; p += 2) {  // two accumulators, so that no FMA waits on the last
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      PrefetchAhead(rows.data + r * rows.bytes_apart + 2 * p * L::kBytes, 4 * L::kBytes, kPrefetchAhead);
      pair(r, p, 2 * p + 1, 0);
      pair(r, p + 1, 2 * p + 3, 1);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    int tail = p;
    if (tail < n_pairs) {
      pair(r, tail, 2 * tail + 1, 0);
      ++tail;
    }
    if (2 * tail < n_blocks) pair(r, tail, 2 * tail, 1);
    const __m512 sum = _mm512_add_ps(_mm512_add_ps(acc[r][0], acc[r][1]), _mm512_add_ps(mins[r][0], mins[r][1]));
    rows.y[r * rows.step] = _mm512_reduce_add_ps(sum);
  }
}

// Four streams: 1.2x Q8_0's and 1.3x Q4_0's draw from memory on one Xeon core (row_streams.h).
constexpr int kStreams = 4;

template <WeightType kType>
void Rows(const Matrix& w, const ActivationBlock* x, int row_begin, int row_end, float* y) {
  const int n_blocks = w.cols / kQ8Block;
  const PairedActivations* paired = Paired<kType>(x, n_blocks);
  InStreams<kStreams>(w, row_begin, row_end, y, [&](auto streams, const RowsInStep& rows) {
    DotRows<kType, decltype(streams)::value>(rows, paired, n_blocks);
  });
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
