// The element types a weight matrix may be stored in, numbered as ggml (and so GGUF) numbers
// them, so a GGUF reader hands its tensors to the runtime without translating types. The
// block-quantized ones store a row as consecutive blocks; runtime/quant_blocks.h has their
// layouts.
#ifndef TOYLLM_RUNTIME_WEIGHT_TYPE_H_
#define TOYLLM_RUNTIME_WEIGHT_TYPE_H_

#include <cstdint>

namespace toyllm {

enum class WeightType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kIQ4_NL = 20,
  kBF16 = 30,
};

// Q8_0, ggml's block_q8_0: 32 weights as int8 sharing one f16 scale, weight = q · scale.
// Packed, so that a block may sit at any address: the kernels read rows in place, and a
// file or a caller may place them at an odd byte.
constexpr int kQ8Block = 32;
struct __attribute__((packed)) BlockQ8_0 {
  uint16_t scale;  // f16 bits
  int8_t q[kQ8Block];
};
static_assert(sizeof(BlockQ8_0) == 34, "GGUF packs Q8_0 blocks in 34 bytes");

// The K-quants' super-block: 256 weights in groups of 16 or 32 with their own small scales.
constexpr int kSuperBlock = 256;

// Weights per block and bytes per block (1 and the element size for plain floats); {0, 0}
// for a number that is no WeightType.
struct BlockShape {
  int elements;
  int bytes;
};
constexpr BlockShape BlockShapeOf(WeightType type) {
  switch (type) {
    case WeightType::kF32: return {1, 4};
    case WeightType::kF16:
    case WeightType::kBF16: return {1, 2};
    case WeightType::kQ4_0: return {32, 18};   // f16 d, 16 bytes of nibbles
    case WeightType::kQ4_1: return {32, 20};   // f16 d and m, 16 bytes of nibbles
    case WeightType::kQ5_0: return {32, 22};   // f16 d, 32 high bits, nibbles
    case WeightType::kQ5_1: return {32, 24};   // f16 d and m, 32 high bits, nibbles
    case WeightType::kQ8_0: return {32, 34};
    case WeightType::kQ2_K: return {256, 84};
    case WeightType::kQ3_K: return {256, 110};
    case WeightType::kQ4_K: return {256, 144};
    case WeightType::kQ5_K: return {256, 176};
    case WeightType::kQ6_K: return {256, 210};
    case WeightType::kIQ4_NL: return {32, 18};  // Q4_0's layout, nibbles indexing a table
  }
  return {0, 0};
}

// Whether a type stores weights in blocks that share scales (every type but the floats).
constexpr bool IsBlockQuantized(WeightType type) { return BlockShapeOf(type).elements > 1; }

// K-quants multiply by activations quantized in 256-blocks (Q8_K), the others in 32-blocks.
constexpr bool IsKQuant(WeightType type) { return BlockShapeOf(type).elements == kSuperBlock; }

// Bytes of `n` consecutive weights of `type` (n a whole number of blocks).
constexpr int64_t WeightBytes(WeightType type, int64_t n) {
  const BlockShape s = BlockShapeOf(type);
  return s.elements == 0 ? 0 : n / s.elements * s.bytes;
}

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_WEIGHT_TYPE_H_
