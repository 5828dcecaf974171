// ggml's block layouts for the quantized weight types (ggml-common.h), byte for byte as
// GGUF stores them. All scales are f16 bits; blocks sit at any byte offset in a file, so
// code reads them through memcpy or unaligned loads.
//
// The legacy types hold 32 weights: weight = d·(q − offset) (Q4_0: q 0..15, offset 8;
// Q5_0: q 0..31, offset 16) or weight = d·q + m (Q4_1, Q5_1). The K-quants hold 256 weights
// in groups of 16 or 32, each group with a small integer scale (and for Q2_K, Q4_K, Q5_K
// an integer min) that the block's f16 d (and dmin) scale again.
#ifndef TOYLLM_RUNTIME_QUANT_BLOCKS_H_
#define TOYLLM_RUNTIME_QUANT_BLOCKS_H_

#include <cstddef>
#include <cstdint>

#include "runtime/weight_type.h"

namespace toyllm {

// Weights j and j + 16 share byte qs[j]: low nibble, high nibble.
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[16];
};
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[16];
};
// As Q4_0/Q4_1, plus bit i of the little-endian qh is weight i's fifth bit.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[16];
};

// IQ4_NL: Q4_0's layout, but each nibble indexes 16 values spaced unevenly — closer near
// zero, where most weights are — and weight = d·value. llama-quantize writes it where a
// Q2_K or Q3_K preset meets rows that are not whole super-blocks (Qwen2.5-0.5B's 896).
// Kept here as value + 128 (1..241): unsigned, as the other types' quants, with offset 128.
inline constexpr uint8_t kIQ4_NLValuePlus128[16] = {1, 24, 45, 63, 79, 93, 106, 118,
                                                    129, 141, 153, 166, 181, 197, 217, 241};

// Where a legacy block keeps its fields, for the kernels that read all five types with one
// template: weight = d·(q − kOffset), or d·q + m when kMin; kFive when qh holds a fifth bit;
// kLookup when q is kIQ4_NLValuePlus128 of the nibble.
template <WeightType kType>
struct LegacyLayout {
  static constexpr bool kMin = kType == WeightType::kQ4_1 || kType == WeightType::kQ5_1;
  static constexpr bool kFive = kType == WeightType::kQ5_0 || kType == WeightType::kQ5_1;
  static constexpr bool kLookup = kType == WeightType::kIQ4_NL;
  static constexpr int kOffset = kMin ? 0 : kFive ? 16 : kLookup ? 128 : 8;
  static constexpr int kQh = kMin ? 4 : 2;  // after d (and m)
  static constexpr int kQs = kQh + (kFive ? 4 : 0);
  static constexpr int kBytes = BlockShapeOf(kType).bytes;
};

// 16 groups of 16; scales[g]: low nibble the scale, high nibble the min. In each half of
// 128 weights, byte qs[32·half + l] holds weights 32·j + l (j = 0..3) in bits 2j, 2j+1.
// weight = d·scale·q − dmin·min, q 0..3.
struct BlockQ2_K {
  uint8_t scales[16];
  uint8_t qs[64];
  uint16_t d, dmin;
};
// Q2_K's 2-bit layout plus a third bit: bit (4·half + j) of hmask[l] for that weight.
// 16 six-bit scales packed in 12 bytes (stored + 32). weight = d·(scale − 32)·(q − 4), q 0..7.
struct BlockQ3_K {
  uint8_t hmask[32];
  uint8_t qs[64];
  uint8_t scales[12];
  uint16_t d;
};
// 8 groups of 32 with six-bit scales and mins packed in 12 bytes (ScaleMinK4). Each 64
// weights share 32 bytes: low nibbles the first 32, high nibbles the next.
// weight = d·scale·q − dmin·min, q 0..15.
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
// Q4_K plus a fifth bit: bit 2p (first 32) or 2p + 1 (next 32) of qh[l] for 64-run p.
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
// 16 groups of 16 with int8 scales; q 0..63 from 4 low bits (ql) and 2 high bits (qh).
// weight = d·scale·(q − 32).
struct BlockQ6_K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};

static_assert(sizeof(BlockQ4_0) == BlockShapeOf(WeightType::kQ4_0).bytes);
static_assert(sizeof(BlockQ4_1) == BlockShapeOf(WeightType::kQ4_1).bytes);
static_assert(sizeof(BlockQ5_0) == BlockShapeOf(WeightType::kQ5_0).bytes);
static_assert(sizeof(BlockQ5_1) == BlockShapeOf(WeightType::kQ5_1).bytes);
static_assert(LegacyLayout<WeightType::kQ4_0>::kQs == offsetof(BlockQ4_0, qs));
static_assert(LegacyLayout<WeightType::kIQ4_NL>::kBytes == sizeof(BlockQ4_0));
static_assert(LegacyLayout<WeightType::kQ4_1>::kQs == offsetof(BlockQ4_1, qs));
static_assert(LegacyLayout<WeightType::kQ5_0>::kQh == offsetof(BlockQ5_0, qh));
static_assert(LegacyLayout<WeightType::kQ5_0>::kQs == offsetof(BlockQ5_0, qs));
static_assert(LegacyLayout<WeightType::kQ5_1>::kQh == offsetof(BlockQ5_1, qh));
static_assert(LegacyLayout<WeightType::kQ5_1>::kQs == offsetof(BlockQ5_1, qs));
static_assert(sizeof(BlockQ2_K) == BlockShapeOf(WeightType::kQ2_K).bytes);
static_assert(sizeof(BlockQ3_K) == BlockShapeOf(WeightType::kQ3_K).bytes);
static_assert(sizeof(BlockQ4_K) == BlockShapeOf(WeightType::kQ4_K).bytes);
static_assert(sizeof(BlockQ5_K) == BlockShapeOf(WeightType::kQ5_K).bytes);
static_assert(sizeof(BlockQ6_K) == BlockShapeOf(WeightType::kQ6_K).bytes);

// Q4_K's and Q5_K's group g (0..7) scale and min from the 12 packed bytes: groups 0..3 in
// the low six bits of bytes 0..3 and 4..7; groups 4..7 in the nibbles of bytes 8..11, with
// their top two bits in the spare top bits of bytes 0..7.
inline void ScaleMinK4(const uint8_t* q, int g, int* scale, int* min) {
  if (g < 4) {
    *scale = q[g] & 63;
    *min = q[g + 4] & 63;
  } else {
    *scale = (q[g + 4] & 0xF) | ((q[g - 4] >> 6) << 4);
    *min = (q[g + 4] >> 4) | ((q[g] >> 6) << 4);
  }
}

// Q3_K's group g (0..15) scale as stored (0..63, 32 meaning zero): low nibbles in bytes
// 0..7 (groups 0..7 low, 8..15 high), top two bits in bytes 8..11.
inline int ScaleQ3_K(const uint8_t* s, int g) {
  const int low = g < 8 ? s[g] & 0xF : s[g - 8] >> 4;
  return low | (((s[8 + g % 4] >> (2 * (g / 4))) & 3) << 4);
}

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_QUANT_BLOCKS_H_
