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

// How far ahead of the blocks being read their row is prefetched (runtime/kernels/
// prefetch.h): without it, Q8_0 rows of llama3.2-1b read 7.9 GB/s from memory on one
// thread of an Intel Xeon (Emerald Rapids) whose DRAM delivers 15; decode 6.3 → 9.6 tok/s
// with 4 KiB ahead, 12.0 → 17.4–18.1 on two threads; 1 and 2 KiB gained less, 8 KiB no more.
constexpr int kPrefetchAhead = 4096;

// Q8_0, two blocks at a time. vpdpbusd multiplies unsigned bytes by signed ones: Q8_0's
// signed quants become unsigned with their top bit flipped, q + 128, and the accumulator
// starts at −128 · Σx to take the 128 off again.

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
// accumulator's start (−128 · Σ of each lane's four quants) and each block's scale in its
// eight lanes.
struct alignas(64) PairedActivations {
  __m512i q, start;
  __m512 scale;
};

const PairedActivations* Paired(const ActivationBlock* x, int n_blocks) {
  thread_local std::vector<PairedActivations> paired;
  paired.resize((n_blocks + 1) / 2);
  static const ActivationBlock kNone = {};  // an odd row's last block pairs with zeros
  for (int p = 0; p < static_cast<int>(paired.size()); ++p) {
    const ActivationBlock& x0 = x[2 * p];
    const ActivationBlock& x1 = 2 * p + 1 < n_blocks ? x[2 * p + 1] : kNone;
    paired[p].q = Pair32(x0.q, x1.q);
    const __m512i lane_sums = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(1), paired[p].q);
    paired[p].start = _mm512_mullo_epi32(lane_sums, _mm512_set1_epi32(-128));
    paired[p].scale = Halves(x0.scale, x1.scale);
  }
  return paired.data();
}

// The rows' dot products with x, kRows rows in step (runtime/kernels/row_streams.h).
template <int kRows>
void DotQ8_0Rows(const RowsInStep& rows, const PairedActivations* x, int n_blocks) {
  constexpr int kBytes = sizeof(BlockQ8_0);
  __m512 acc[kRows][2];
  for (int r = 0; r < kRows; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  // Pair p of row r: blocks 2p and b1 (2p + 1, or 2p again for an odd row's last, against zeros).
  const auto pair = [&](int r, int p, int b1, int into) {
    const uint8_t* row = rows.data + r * rows.bytes_apart;
    const uint8_t* w0 = row + 2 * p * kBytes;
    const uint8_t* w1 = row + b1 * kBytes;
    const __m512i q = _mm512_xor_si512(Pair32(w0 + offsetof(BlockQ8_0, q), w1 + offsetof(BlockQ8_0, q)), _mm512_set1_epi8(-128));
    const __m512i dot = _mm512_dpbusd_epi32(x[p].start, q, x[p].q);
    // Each block's first 32 bits broadcast from memory, no shuffle: d and two quant bytes.
    int32_t h0, h1;
    std::memcpy(&h0, w0, 4);
    std::memcpy(&h1, w1, 4);
    const __m512 d = _mm512_moveldup_ps(_mm512_cvtph_ps(_mm256_mask_set1_epi32(_mm256_set1_epi32(h0), 0xF0, h1)));
    acc[r][into] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, x[p].scale), acc[r][into]);
  };
  const int n_pairs = n_blocks / 2;
  int p = 0;
  for (; p + 2 <= n_pairs; p += 2) {  // two accumulators, so that no FMA waits on the last
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      PrefetchAhead(rows.data + r * rows.bytes_apart + 2 * p * kBytes, 4 * kBytes, kPrefetchAhead);
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
    rows.y[r * rows.step] = _mm512_reduce_add_ps(_mm512_add_ps(acc[r][0], acc[r][1]));
  }
}

// The nibble types four blocks at a time. A step's bytes (72 for Q4_0, up to 96 for Q5_1)
// come in with two loads, and one permute of 16-bit words — every field of these blocks
// starts on an even byte — lays the four blocks' quant bytes side by side, block k in
// 128-bit lane k; another gathers the four d (and m). The low nibbles then meet x's first
// 16 values of each block and the high nibbles its last 16, in two vpdpbusd, and one FMA
// scales all four blocks: about 11 vector instructions for 128 weights where a walk in
// pairs like Q8_0's took 20. In-cache rows 2048 wide on one Zen 5 core, GB/s: Q4_0
// 29.5–30.4 → 44.5–47.0, Q4_1 30–31 → 44–46, Q5_0 and Q5_1 30 → 39–41 with their fifth
// bits as below (Q5_0 896 wide, Qwen2.5-0.5B's, 20 → 34 before that).
template <WeightType kType>
struct Quads {
  using L = LegacyLayout<kType>;
  static constexpr int kWords = L::kBytes / 2;  // a block's 16-bit words
  static constexpr int kStepWords = 4 * kWords;
  static_assert(L::kBytes % 2 == 0 && L::kQs % 2 == 0 && L::kQh % 2 == 0, "fields on even bytes");
  static_assert(kStepWords <= 64, "a step fits two 64-byte loads");

  // Word w of the quants' permute: lane w / 8 is block w / 8, its quant words in order.
  static __m512i QuantIndex() {
    alignas(64) int16_t index[32];
    for (int w = 0; w < 32; ++w) index[w] = static_cast<int16_t>(w / 8 * kWords + L::kQs / 2 + w % 8);
    return _mm512_load_si512(index);
  }
  // Word w < 16 of the heads' permute: block w / 4's d in all four lanes that block's sums
  // fill, or for the min types d, m, d, m (the odd lanes are where m meets Σx).
  static __m512i HeadIndex() {
    alignas(64) int16_t index[32] = {};
    for (int w = 0; w < 16; ++w) index[w] = static_cast<int16_t>(w / 4 * kWords + (L::kMin ? w % 2 : 0));
    return _mm512_load_si512(index);
  }
  // The fifth bits' permute: block k's 32 bits of qh in both 64-bit halves of lane k.
  static __m512i QhIndex() {
    alignas(64) int16_t index[32];
    for (int w = 0; w < 32; ++w) index[w] = static_cast<int16_t>(w / 8 * kWords + L::kQh / 2 + w % 2);
    return _mm512_load_si512(index);
  }
  // vpmultishiftqb's selectors: byte j of a 128-bit lane takes the 8 bits from bit
  // first + j − 4 (mod 64) of its 64-bit half, which holds qh twice: bit first + j lands at
  // bit 4.
  static __m512i FifthBitAt(int first) {
    alignas(64) uint8_t select[64];
    for (int i = 0; i < 64; ++i) select[i] = static_cast<uint8_t>((first + i % 16 - 4) & 63);
    return _mm512_load_si512(select);
  }
};

// Four activation blocks as every row meets them: block k's x[0, 16) in lane k of `low`, its
// x[16, 32) in lane k of `high`, the accumulator's start (−offset · Σ of the eight x each
// int32 lane multiplies), block k's scale in lanes 4k..4k+3 and, for the min types, its
// scale · Σx in lane 4k + 1. A block past the row's end is zeros.
struct alignas(64) QuadActivations {
  __m512i low, high, start;
  __m512 scale, sum;
};

template <WeightType kType>
const QuadActivations* InQuads(const ActivationBlock* x, int n_blocks) {
  thread_local std::vector<QuadActivations> quads;
  quads.resize((n_blocks + 3) / 4);
  const __m512i ones = _mm512_set1_epi8(1);
  for (int s = 0; s < static_cast<int>(quads.size()); ++s) {
    QuadActivations& q = quads[s];
    q.low = q.high = _mm512_setzero_si512();
    q.scale = _mm512_setzero_ps();
    for (int k = 0; k < 4 && 4 * s + k < n_blocks; ++k) {
      const ActivationBlock& b = x[4 * s + k];
      const __mmask16 lanes = static_cast<__mmask16>(0xF << (4 * k));
      q.low = _mm512_mask_broadcast_i32x4(q.low, lanes, _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.q)));
      q.high = _mm512_mask_broadcast_i32x4(q.high, lanes, _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.q + 16)));
      q.scale = _mm512_mask_broadcastss_ps(q.scale, lanes, _mm_set_ss(b.scale));
    }
    const __m512i lane_sums = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, q.low), ones, q.high);
    q.start = _mm512_mullo_epi32(lane_sums, _mm512_set1_epi32(-LegacyLayout<kType>::kOffset));
    if (LegacyLayout<kType>::kMin) {  // each block's Σx in all four of its lanes, then kept in lane 4k + 1
      const __m512i pairs = _mm512_add_epi32(lane_sums, _mm512_shuffle_epi32(lane_sums, _MM_PERM_BADC));
      const __m512i totals = _mm512_add_epi32(pairs, _mm512_shuffle_epi32(pairs, _MM_PERM_CDAB));
      q.sum = _mm512_maskz_mul_ps(0x2222, _mm512_cvtepi32_ps(totals), q.scale);
    }
  }
  return quads.data();
}

// The rows' dot products with x, kRows rows in step (runtime/kernels/row_streams.h).
template <WeightType kType, int kRows>
void DotQuadRows(const RowsInStep& rows, const QuadActivations* x, int n_blocks) {
  using L = LegacyLayout<kType>;
  using Q = Quads<kType>;
  const __m512i quant_index = Q::QuantIndex(), head_index = Q::HeadIndex(), qh_index = Q::QhIndex();
  const __m512i low_fifth = Q::FifthBitAt(0), high_fifth = Q::FifthBitAt(16);
  const __m512i nibble = _mm512_set1_epi8(0x0F), fifth = _mm512_set1_epi8(0x10);
  const __m512i values = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4_NLValuePlus128)));
  __m512 acc[kRows], mins[kRows];
  for (int r = 0; r < kRows; ++r) acc[r] = mins[r] = _mm512_setzero_ps();
  // Step s of row r, its first `blocks` blocks (1..4; the rest read as zeros).
  const auto step = [&](int r, int s, int blocks) {
    const uint8_t* w = rows.data + r * rows.bytes_apart + 4 * s * L::kBytes;
    const int words = blocks * Q::kWords;
    const __m512i first = words >= 32 ? _mm512_loadu_si512(w) : _mm512_maskz_loadu_epi16(static_cast<__mmask32>((uint64_t{1} << words) - 1), w);
    const __m512i second = _mm512_maskz_loadu_epi16(words > 32 ? static_cast<__mmask32>((uint64_t{1} << (words - 32)) - 1) : 0, w + 64);
    const __m512i packed = _mm512_permutex2var_epi16(first, quant_index, second);
    __m512i low = _mm512_and_si512(packed, nibble);
    __m512i high = _mm512_and_si512(_mm512_srli_epi16(packed, 4), nibble);
    if (L::kFive) {
      // Bit j of block k's qh is weight j's fifth bit: bits 0..15 go with the low nibbles'
      // lanes 16k..16k+15, bits 16..31 with the high nibbles'. vpmultishiftqb moves each
      // to bit 4 of its byte (with masks instead, Q5_0 rows ran at 35–36 GB/s in cache, 39–41 now).
      const __m512i bits = _mm512_permutex2var_epi16(first, qh_index, second);
      low = _mm512_or_si512(low, _mm512_and_si512(_mm512_multishift_epi64_epi8(low_fifth, bits), fifth));
      high = _mm512_or_si512(high, _mm512_and_si512(_mm512_multishift_epi64_epi8(high_fifth, bits), fifth));
    }
    if (L::kLookup) {  // vpdpbusd's int32 sums take IQ4_NL's value + 128 as it is
      low = _mm512_shuffle_epi8(values, low);
      high = _mm512_shuffle_epi8(values, high);
    }
    const __m512i dot = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(x[s].start, low, x[s].low), high, x[s].high);
    const __m512 heads = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutex2var_epi16(first, head_index, second)));
    const __m512 d = L::kMin ? _mm512_moveldup_ps(heads) : heads;
    acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, x[s].scale), acc[r]);
    if (L::kMin) mins[r] = _mm512_fmadd_ps(heads, x[s].sum, mins[r]);  // m·Σx in lane 4k + 1
  };
  const int n_steps = n_blocks / 4;
  for (int s = 0; s < n_steps; ++s) {
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      PrefetchAhead(rows.data + r * rows.bytes_apart + 4 * s * L::kBytes, 4 * L::kBytes, kPrefetchAhead);
      step(r, s, 4);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    if (n_blocks % 4 != 0) step(r, n_steps, n_blocks % 4);
    rows.y[r * rows.step] = _mm512_reduce_add_ps(L::kMin ? _mm512_add_ps(acc[r], mins[r]) : acc[r]);
  }
}

// Four streams: 1.2x Q8_0's and 1.3x Q4_0's draw from memory on one Xeon core (row_streams.h).
constexpr int kStreams = 4;

template <WeightType kType>
void Rows(const Matrix& w, const ActivationBlock* x, int row_begin, int row_end, float* y) {
  const int n_blocks = w.cols / kQ8Block;
  if constexpr (kType == WeightType::kQ8_0) {
    const PairedActivations* paired = Paired(x, n_blocks);
    InStreams<kStreams>(w, row_begin, row_end, y, [&](auto streams, const RowsInStep& rows) {
      DotQ8_0Rows<decltype(streams)::value>(rows, paired, n_blocks);
    });
  } else {
    const QuadActivations* quads = InQuads<kType>(x, n_blocks);
    InStreams<kStreams>(w, row_begin, row_end, y, [&](auto streams, const RowsInStep& rows) {
      DotQuadRows<kType, decltype(streams)::value>(rows, quads, n_blocks);
    });
  }
}

}  // namespace
void RowsLegacyAvx512(const Matrix& w, const ActivationBlock* x, int row_begin, int row_end, float* y) {
  switch (w.type) {
    case WeightType::kQ4_0: return Rows<WeightType::kQ4_0>(w, x, row_begin, row_end, y);
    case WeightType::kQ5_0: return Rows<WeightType::kQ5_0>(w, x, row_begin, row_end, y);
    case WeightType::kQ4_1: return Rows<WeightType::kQ4_1>(w, x, row_begin, row_end, y);
    case WeightType::kQ5_1: return Rows<WeightType::kQ5_1>(w, x, row_begin, row_end, y);
    case WeightType::kIQ4_NL: return Rows<WeightType::kIQ4_NL>(w, x, row_begin, row_end, y);
    case WeightType::kQ8_0: return Rows<WeightType::kQ8_0>(w, x, row_begin, row_end, y);
    default: return;  // GemvAvx512 sends only these types
  }
}

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
