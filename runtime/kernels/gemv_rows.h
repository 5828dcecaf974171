// What the SIMD GEMV paths share whatever their vector width: the walk over a row's Q8_0
// blocks and the row loop per block type (each path has kernels of its own for the float
// types and for Q4_K, Q5_K and Q6_K, the types most downloaded files are made of).
// gemv_avx2.cc and gemv_avx512.cc include it after their target pragma and instantiate
// Gemv<Isa> with an `Isa` that has:
//   static __m256i Dot32(__m256i w, __m256i x);
//       // 32 int8 products (w and x signed), as eight int32 sums
// The other quantized types unpack a block into unsigned bytes with AVX2 (both paths have
// it) and multiply them with maddubs, in the form of runtime/quant_unpack.h.
#ifndef TOYLLM_RUNTIME_KERNELS_GEMV_ROWS_H_
#define TOYLLM_RUNTIME_KERNELS_GEMV_ROWS_H_

#include <immintrin.h>

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "runtime/kernels/gemv.h"
#include "runtime/kernels/prefetch.h"
#include "runtime/kernels/row_streams.h"
#include "runtime/quant_blocks.h"
#include "runtime/weights.h"

namespace toyllm {
namespace gemv_rows {

// How far ahead of the blocks being read their row is prefetched (runtime/kernels/
// prefetch.h), as the AVX-512 kernels do.
constexpr int kPrefetchAhead = 4096;

// A block's f16 scale (F16C: both SIMD paths have it), read without assuming alignment.
// Templates so that each instruction set compiles its own copy: one inline function
// compiled for two targets would leave the linker free to pick the AVX-512 one for both.
template <class Isa>
float BlockScale(const BlockQ8_0& block) {
  return _cvtsh_ss(block.scale);
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
  const __m256i qw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.q));
  const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q));
  const __m256 dot = _mm256_cvtepi32_ps(Isa::Dot32(qw, qx));
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
    PrefetchAhead(w + b, 4 * sizeof(BlockQ8_0), kPrefetchAhead);
    a0 = ScaledBlockDot<Isa>(w[b], x[b], a0);
    a1 = ScaledBlockDot<Isa>(w[b + 1], x[b + 1], a1);
    a2 = ScaledBlockDot<Isa>(w[b + 2], x[b + 2], a2);
    a3 = ScaledBlockDot<Isa>(w[b + 3], x[b + 3], a3);
  }
  for (; b < n_blocks; ++b) a0 = ScaledBlockDot<Isa>(w[b], x[b], a0);
  return Sum8<Isa>(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
}

template <class Isa>
float HalfAt(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  return _cvtsh_ss(bits);
}

template <class Isa>
__m256i Bytes(uint8_t v) {
  return _mm256_set1_epi8(static_cast<char>(v));
}

// The bytes of a 256-bit vector shifted right by `bits` within each byte, then masked.
template <class Isa, int kBits, uint8_t kMask>
__m256i ShiftMask(__m256i v) {
  return _mm256_and_si256(_mm256_srli_epi16(v, kBits), Bytes<Isa>(kMask));
}

// 32 bits to 32 bytes: byte i is 0xFF where bit i is set.
template <class Isa>
__m256i BitsToBytes(uint32_t bits) {
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
}

// A legacy 32-weight block's unsigned quants: nibbles, plus the fifth bits for Q5_*, or
// IQ4_NL's values looked up by the nibbles. The 16 bytes are loaded into both halves at
// once and the upper half shifted by a nibble, where two loads, two shifts and an insert
// had been a fifth of the Q5_0 walk's instructions.
template <class Isa, WeightType kType>
__m256i LegacyQuants(const uint8_t* block) {
  using L = LegacyLayout<kType>;
  const __m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + L::kQs)));
  const __m256i q = _mm256_and_si256(_mm256_srlv_epi64(b, _mm256_set_epi64x(4, 4, 0, 0)), Bytes<Isa>(0x0F));
  if constexpr (L::kLookup) {
    return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4_NLValuePlus128))), q);
  }
  if constexpr (!L::kFive) return q;
  uint32_t bits;
  std::memcpy(&bits, block + L::kQh, 4);
  return _mm256_or_si256(q, _mm256_and_si256(BitsToBytes<Isa>(bits), Bytes<Isa>(0x10)));
}

// The activations as every row of one legacy product meets them, prepared once per product
// so that the rows read in step (below) share the work. Per block: the quants, and for the
// types with an offset (weight = d·(q − offset)) what the offset takes off each pair's
// product, offset·(x₂ᵢ + x₂ᵢ₊₁) as maddubs leaves it in int16; apart, for Q4_1/Q5_1
// (weight = d·q + m), scale · Σx, which m multiplies. Each block's scale is read from x
// itself. 64 bytes a block: at 96, an 8192-wide row's activations filled a 32 KiB L1 and
// llama3.2-1b's Q4_0 decode gained nothing.
struct alignas(32) LegacyActivation {
  __m256i q;
  __m256i offset_pairs;  // set and read only for the types with an offset
};

struct PreparedLegacy {
  const ActivationBlock* x;
  const LegacyActivation* blocks;
  const float* sum;      // only for the types with m
};

template <class Isa, WeightType kType>
PreparedLegacy PrepareLegacy(const ActivationBlock* x, int n_blocks) {
  using L = LegacyLayout<kType>;
  thread_local std::vector<LegacyActivation> blocks;
  thread_local std::vector<float> sum;
  blocks.resize(n_blocks);
  if (L::kMin) sum.resize(n_blocks);
  for (int b = 0; b < n_blocks; ++b) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].q));
    blocks[b].q = q;
    if (L::kOffset != 0 && !L::kLookup) {
      blocks[b].offset_pairs = _mm256_mullo_epi16(_mm256_maddubs_epi16(Bytes<Isa>(1), q), _mm256_set1_epi16(L::kOffset));
    }
    if (L::kMin) sum[b] = x[b].scale * Sum8<Isa>(_mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(Bytes<Isa>(1), q), _mm256_set1_epi16(1))));
  }
  return {x, blocks.data(), sum.data()};
}

// kRows legacy rows · x, in step (row_streams.h): each block of x is prepared once for all
// of them, and maddubs multiplies the unsigned quants by it directly, where a signed product
// would first move each row's signs onto x. This walk is bound by its arithmetic, not by
// memory, so each block's scale is one conversion of d (and m) in four lanes, multiplied
// by x's scale before it is broadcast, and the offset comes off in int16: about 15 vector
// instructions a block and row, where there had been 21. On one AMD Zen 3 core,
// qwen2.5-0.5b q4_k_m (mostly Q5_0) decoded at 21.7–22.0 tokens/s with one row at a time and
// the signs moved, 25.3–25.7 with four rows in step; qwen2.5-0.5b q4_0 went from 24.5–30.3 to
// 26.7–40.6 with the 15 instructions (a busier day).
template <class Isa, WeightType kType, int kRows>
void DotLegacyRows(const RowsInStep& rows, const PreparedLegacy& x, int n_blocks) {
  using L = LegacyLayout<kType>;
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[kRows];
  __m128 m_sum[kRows];  // lane 1: Σ m·scale·Σx, for the types with m
  for (int r = 0; r < kRows; ++r) {
    acc[r] = _mm256_setzero_ps();
    m_sum[r] = _mm_setzero_ps();
  }
  const auto block = [&](int r, int b) {
    const uint8_t* p = rows.data + r * rows.bytes_apart + b * L::kBytes;
    const __m256i q = LegacyQuants<Isa, kType>(p);
    __m256i pairs;
    if constexpr (L::kLookup) {
      // IQ4_NL's value + 128 reaches 241, and 241·127·2 overflows maddubs's int16 pairs:
      // the signed values (value + 128 with its top bit flipped) meet x with their signs
      // moved onto it.
      const __m256i value = _mm256_xor_si256(q, Bytes<Isa>(0x80));
      pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(value), _mm256_sign_epi8(x.blocks[b].q, value));
    } else {
      pairs = _mm256_maddubs_epi16(q, x.blocks[b].q);
      if (L::kOffset != 0) pairs = _mm256_sub_epi16(pairs, x.blocks[b].offset_pairs);
    }
    const __m256 dot = _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, ones));
    // d and m: a block's first 32 bits. The types without m carry two quants' bytes there,
    // any float16 at all, NaN too: their lane 1 is never read.
    int32_t head;
    std::memcpy(&head, p, 4);
    const __m128 heads = _mm_cvtph_ps(_mm_cvtsi32_si128(head));
    const __m256 scale = _mm256_broadcastss_ps(_mm_mul_ss(heads, _mm_load_ss(&x.x[b].scale)));
    acc[r] = _mm256_fmadd_ps(dot, scale, acc[r]);
    if (L::kMin) m_sum[r] = _mm_fmadd_ps(heads, _mm_broadcast_ss(x.sum + b), m_sum[r]);
  };
  int b = 0;
  for (; b + 4 <= n_blocks; b += 4) {
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      PrefetchAhead(rows.data + r * rows.bytes_apart + b * L::kBytes, 4 * L::kBytes, kPrefetchAhead);
      for (int i = 0; i < 4; ++i) block(r, b + i);
    }
  }
  for (; b < n_blocks; ++b) {
    for (int r = 0; r < kRows; ++r) block(r, b);
  }
  for (int r = 0; r < kRows; ++r) {
    const float m_term = L::kMin ? _mm_cvtss_f32(_mm_movehdup_ps(m_sum[r])) : 0.0f;
    rows.y[r * rows.step] = Sum8<Isa>(acc[r]) + m_term;
  }
}

// A K-quant super-block unpacked into registers: q[c] holds weights 32c..32c+31 as unsigned
// bytes, scale and min one int16 per group of 16 (runtime/quant_unpack.h's form). The
// scales are built with vector instructions and stored whole: stores of single int16s
// read back as a vector stall on store forwarding (that had made Q4_K 3x slower).
struct KBlock {
  __m256i q[8];
  alignas(32) int16_t scale[16];
  alignas(32) int16_t min[16];
  float d, dmin;
};

template <class Isa>
void StoreScales(__m256i scale, __m256i min, KBlock* k) {
  _mm256_store_si256(reinterpret_cast<__m256i*>(k->scale), scale);
  _mm256_store_si256(reinterpret_cast<__m256i*>(k->min), min);
}

// Q2_K and Q3_K: weight 128·half + 32·j + l in bits 2j of qs[32·half + l].
template <class Isa>
void TwoBitQuants(const uint8_t* qs, __m256i* q) {
  for (int half = 0; half < 2; ++half) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * half));
    q[4 * half + 0] = ShiftMask<Isa, 0, 3>(b);
    q[4 * half + 1] = ShiftMask<Isa, 2, 3>(b);
    q[4 * half + 2] = ShiftMask<Isa, 4, 3>(b);
    q[4 * half + 3] = ShiftMask<Isa, 6, 3>(b);
  }
}

template <class Isa>
void UnpackQ2_K(const uint8_t* p, KBlock* k) {
  TwoBitQuants<Isa>((p + offsetof(BlockQ2_K, qs)), k->q);
  const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + offsetof(BlockQ2_K, scales)));
  StoreScales<Isa>(_mm256_cvtepu8_epi16(_mm_and_si128(s, _mm_set1_epi8(0x0F))),
                   _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), _mm_set1_epi8(0x0F))), k);
  k->d = HalfAt<Isa>(p + offsetof(BlockQ2_K, d));
  k->dmin = HalfAt<Isa>(p + offsetof(BlockQ2_K, dmin));
}

template <class Isa>
void UnpackQ3_K(const uint8_t* p, KBlock* k) {
  TwoBitQuants<Isa>((p + offsetof(BlockQ3_K, qs)), k->q);
  __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>((p + offsetof(BlockQ3_K, hmask))));
  for (int c = 0; c < 8; ++c) {  // bit c of hmask[l] is weight 32c + l's third bit
    k->q[c] = _mm256_or_si256(k->q[c], _mm256_slli_epi16(_mm256_and_si256(high, Bytes<Isa>(1)), 2));
    high = _mm256_srli_epi16(high, 1);
  }
  // ScaleQ3_K for all 16 groups at once, on 32-bit words (as ggml does it).
  uint32_t a[4];
  std::memcpy(a, p + offsetof(BlockQ3_K, scales), 12);
  const uint32_t top = a[2], k2 = 0x0f0f0f0f, k1 = 0x03030303;
  a[2] = ((a[0] >> 4) & k2) | (((top >> 4) & k1) << 4);
  a[3] = ((a[1] >> 4) & k2) | (((top >> 6) & k1) << 4);
  a[0] = (a[0] & k2) | ((top & k1) << 4);
  a[1] = (a[1] & k2) | (((top >> 2) & k1) << 4);
  const __m128i s = _mm_set_epi32(static_cast<int>(a[3]), static_cast<int>(a[2]), static_cast<int>(a[1]), static_cast<int>(a[0]));
  StoreScales<Isa>(_mm256_cvtepi8_epi16(_mm_sub_epi8(s, _mm_set1_epi8(32))), _mm256_setzero_si256(), k);
  k->d = HalfAt<Isa>(p + offsetof(BlockQ3_K, d));
  k->dmin = 0.0f;
}

// ScaleMinK4 for all 8 groups at once: bytes 0..7 the scales, 8..15 the mins. The 12
// packed bytes hold, for i < 4, scale i and min i in the low 6 bits of bytes i and 4 + i,
// and scale and min 4 + i in the nibbles of byte 8 + i with their top two bits in the top
// bits of bytes i and 4 + i. Unpacked in general-purpose registers, four at a time, which
// leaves the vector units to the products (two shuffles and six more vector instructions
// had done it: in-cache Q4_K rows on one Zen 5 core running the AVX2 path 22 → 24 GB/s).
template <class Isa>
__m128i ScalesAndMinsK4(const uint8_t* packed) {
  uint32_t b[3];
  std::memcpy(b, packed, sizeof(b));
  const uint32_t six = 0x3F3F3F3F, nibble = 0x0F0F0F0F, two = 0x03030303;
  return _mm_setr_epi32(static_cast<int>(b[0] & six), static_cast<int>((b[2] & nibble) | ((b[0] >> 6) & two) << 4),
                        static_cast<int>(b[1] & six), static_cast<int>(((b[2] >> 4) & nibble) | ((b[1] >> 6) & two) << 4));
}

// Q4_K and Q5_K weights 64k .. 64k + 63 as unsigned bytes: the low nibbles of the 32 bytes
// at qs + 32k are the first 32, the high nibbles the next. Q5_K's fifth bits of those are
// bits 2k and 2k + 1 of qh's 32 bytes (unused for Q4_K).
template <class Isa, bool kFive>
void NibblePair(const uint8_t* qs, __m256i qh, int k, __m256i* first, __m256i* second) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * k));
  *first = ShiftMask<Isa, 0, 0x0F>(v);
  *second = ShiftMask<Isa, 4, 0x0F>(v);
  if constexpr (kFive) {
    const __m256i high = _mm256_srli_epi16(qh, 2 * k);
    *first = _mm256_or_si256(*first, _mm256_and_si256(_mm256_slli_epi16(high, 4), Bytes<Isa>(0x10)));
    *second = _mm256_or_si256(*second, _mm256_and_si256(_mm256_slli_epi16(high, 3), Bytes<Isa>(0x10)));
  }
}

// Q6_K weights 128·half + 32j .. 128·half + 32j + 31 as unsigned bytes in q[j]: the low
// nibbles of ql's 64 bytes, then the high ones, their top two bits from qh's 32 bytes, bits
// 2j and 2j + 1.
template <class Isa>
void Q6_KHalf(const uint8_t* block, int half, __m256i* q) {
  const uint8_t* ql = block + offsetof(BlockQ6_K, ql) + 64 * half;
  const __m256i la = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
  const __m256i lb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + offsetof(BlockQ6_K, qh) + 32 * half));
  q[0] = _mm256_or_si256(ShiftMask<Isa, 0, 0x0F>(la), _mm256_slli_epi16(ShiftMask<Isa, 0, 3>(h), 4));
  q[1] = _mm256_or_si256(ShiftMask<Isa, 0, 0x0F>(lb), _mm256_slli_epi16(ShiftMask<Isa, 2, 3>(h), 4));
  q[2] = _mm256_or_si256(ShiftMask<Isa, 4, 0x0F>(la), _mm256_slli_epi16(ShiftMask<Isa, 4, 3>(h), 4));
  q[3] = _mm256_or_si256(ShiftMask<Isa, 4, 0x0F>(lb), _mm256_slli_epi16(ShiftMask<Isa, 6, 3>(h), 4));
}

// The scales and mins, each repeated for both groups of 16 of its group of 32.
template <class Isa>
void ScalesMinsK4(const uint8_t* packed, KBlock* k) {
  const __m128i sm = ScalesAndMinsK4<Isa>(packed);
  StoreScales<Isa>(_mm256_cvtepu8_epi16(_mm_unpacklo_epi8(sm, sm)), _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(sm, sm)), k);
}

template <class Isa, bool kFive>
void UnpackQ45_K(const uint8_t* p, KBlock* k) {
  using Block = std::conditional_t<kFive, BlockQ5_K, BlockQ4_K>;
  const __m256i qh = kFive ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + offsetof(BlockQ5_K, qh))) : _mm256_setzero_si256();
  for (int r = 0; r < 4; ++r) NibblePair<Isa, kFive>(p + offsetof(Block, qs), qh, r, &k->q[2 * r], &k->q[2 * r + 1]);
  ScalesMinsK4<Isa>(p + offsetof(Block, scales), k);
  k->d = HalfAt<Isa>(p);
  k->dmin = HalfAt<Isa>(p + 2);
}

template <class Isa>
void UnpackQ6_K(const uint8_t* p, KBlock* k) {
  Q6_KHalf<Isa>(p, 0, k->q);
  Q6_KHalf<Isa>(p, 1, k->q + 4);
  StoreScales<Isa>(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + offsetof(BlockQ6_K, scales)))),
                   _mm256_setzero_si256(), k);
  k->d = HalfAt<Isa>(p + offsetof(BlockQ6_K, d));
  k->dmin = 0.0f;
}

// A block's 16 int16 scales, one per group of 16, arranged so that ScaledChunkDot picks
// chunk c's two with one in-lane shuffle: word c of the lower half is group 2c's scale, of
// the upper half group 2c + 1's (a lane-crossing permute per chunk had been).
template <class Isa>
__m256i ScalesByChunk(__m256i scales) {
  const __m256i even_odd = _mm256_shuffle_epi8(
      scales, _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
                               0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15));
  return _mm256_permute4x64_epi64(even_odd, _MM_SHUFFLE(3, 1, 2, 0));
}

// Σ scale·q·x over weights 32c .. 32c + 31 (groups 2c and 2c + 1) into eight int32 sums:
// maddubs multiplies the unsigned quants by the signed activations into pairs (at most
// 2·63·127, no saturation), madd the pairs by their groups' scales, word c of each half of
// by_chunk.
template <class Isa>
__m256i ScaledChunkDot(__m256i q, const ActivationBlockK& x, int c, __m256i by_chunk) {
  const __m256i scales = _mm256_shuffle_epi8(by_chunk, _mm256_set1_epi16(static_cast<int16_t>(((2 * c + 1) << 8) | (2 * c))));
  const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + 32 * c));
  return _mm256_madd_epi16(_mm256_maddubs_epi16(q, qx), scales);
}

// A K-quant row · x quantized in 256-blocks:
//   sx·(d·Σ_g scale_g·(Σ q·qx − offset·sum_g) − dmin·Σ_g min_g·sum_g)
template <class Isa, void (*kUnpack)(const uint8_t*, KBlock*), int kOffset>
float DotK(const void* row, const ActivationBlockK* x, int n, int block_bytes) {
  const uint8_t* p = static_cast<const uint8_t*>(row);
  __m256 acc = _mm256_setzero_ps();
  KBlock k;
  for (int b = 0; b < n / kSuperBlock; ++b, p += block_bytes) {
    PrefetchAhead(p, block_bytes, kPrefetchAhead);
    kUnpack(p, &k);
    const __m256i scale = _mm256_load_si256(reinterpret_cast<const __m256i*>(k.scale));
    const __m256i by_chunk = ScalesByChunk<Isa>(scale);
    __m256i dot = _mm256_setzero_si256();
    for (int c = 0; c < 8; ++c) dot = _mm256_add_epi32(dot, ScaledChunkDot<Isa>(k.q[c], x[b], c, by_chunk));
    const __m256i sums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].sums));
    if (kOffset != 0) {
      dot = _mm256_sub_epi32(dot, _mm256_mullo_epi32(_mm256_set1_epi32(kOffset), _mm256_madd_epi16(sums, scale)));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(k.d * x[b].scale), _mm256_cvtepi32_ps(dot), acc);
    if (kOffset == 0) {  // the types with mins
      const __m256i mins = _mm256_madd_epi16(sums, _mm256_load_si256(reinterpret_cast<const __m256i*>(k.min)));
      acc = _mm256_fnmadd_ps(_mm256_set1_ps(k.dmin * x[b].scale), _mm256_cvtepi32_ps(mins), acc);
    }
  }
  return Sum8<Isa>(acc);
}

// A thread's rows as four far-apart streams (row_streams.h), one whole row of each in turn:
// the processor's prefetchers keep more lines in flight for several sequential streams than
// for one.
template <class RowDot>
void WholeRowsInStreams(const Matrix& w, int row_begin, int row_end, float* y, RowDot dot) {
  InStreams<4>(w, row_begin, row_end, y, [&](auto streams, const RowsInStep& rows) {
    for (int r = 0; r < decltype(streams)::value; ++r) rows.y[r * rows.step] = dot(rows.data + r * rows.bytes_apart);
  });
}

template <class Isa, WeightType kType>
void RowsLegacy(const Matrix& w, const ActivationBlock* x, int row_begin, int row_end, float* y) {
  const int n_blocks = w.cols / kQ8Block;
  const PreparedLegacy prepared = PrepareLegacy<Isa, kType>(x, n_blocks);
  InStreams<4>(w, row_begin, row_end, y, [&](auto streams, const RowsInStep& rows) {
    DotLegacyRows<Isa, kType, decltype(streams)::value>(rows, prepared, n_blocks);
  });
}

template <class Isa, void (*kUnpack)(const uint8_t*, KBlock*), int kOffset>
void RowsK(const Matrix& w, const ActivationBlockK* x, int row_begin, int row_end, float* y) {
  const int bytes = BlockShapeOf(w.type).bytes;
  WholeRowsInStreams(w, row_begin, row_end, y, [&](const uint8_t* row) { return DotK<Isa, kUnpack, kOffset>(row, x, w.cols, bytes); });
}

template <class Isa>
void RowsQ8_0(const Matrix& w, const ActivationBlock* x, int row_begin, int row_end, float* y) {
  WholeRowsInStreams(w, row_begin, row_end, y, [&](const uint8_t* row) { return DotQ8_0<Isa>(row, x, w.cols); });
}

// The block types' products; the float types, Q4_K, Q5_K and Q6_K are the caller's.
template <class Isa>
void Gemv(const Matrix& w, const GemvInput& x, int row_begin, int row_end, float* y) {
  switch (w.type) {
    case WeightType::kF32:
    case WeightType::kF16:
    case WeightType::kBF16:
    case WeightType::kQ4_K:
    case WeightType::kQ5_K:
    case WeightType::kQ6_K: return;
    case WeightType::kQ8_0: return RowsQ8_0<Isa>(w, x.blocks, row_begin, row_end, y);
    case WeightType::kQ4_0: return RowsLegacy<Isa, WeightType::kQ4_0>(w, x.blocks, row_begin, row_end, y);
    case WeightType::kQ4_1: return RowsLegacy<Isa, WeightType::kQ4_1>(w, x.blocks, row_begin, row_end, y);
    case WeightType::kQ5_0: return RowsLegacy<Isa, WeightType::kQ5_0>(w, x.blocks, row_begin, row_end, y);
    case WeightType::kQ5_1: return RowsLegacy<Isa, WeightType::kQ5_1>(w, x.blocks, row_begin, row_end, y);
    case WeightType::kIQ4_NL: return RowsLegacy<Isa, WeightType::kIQ4_NL>(w, x.blocks, row_begin, row_end, y);
    case WeightType::kQ2_K: return RowsK<Isa, UnpackQ2_K<Isa>, 0>(w, x.k_blocks, row_begin, row_end, y);
    case WeightType::kQ3_K: return RowsK<Isa, UnpackQ3_K<Isa>, 4>(w, x.k_blocks, row_begin, row_end, y);
  }
}

}  // namespace gemv_rows
}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_GEMV_ROWS_H_
