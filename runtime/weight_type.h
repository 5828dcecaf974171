// The element types a weight matrix may be stored in, numbered as ggml (and so GGUF) numbers
// them, so a GGUF reader hands its tensors to the runtime without translating types.
#ifndef TOYLLM_RUNTIME_WEIGHT_TYPE_H_
#define TOYLLM_RUNTIME_WEIGHT_TYPE_H_

#include <cstdint>

namespace toyllm {

enum class WeightType : uint32_t { kF32 = 0, kF16 = 1, kQ8_0 = 8, kBF16 = 30 };

// Q8_0, ggml's block_q8_0: 32 weights as int8 sharing one f16 scale, weight = q · scale.
constexpr int kQ8Block = 32;
struct BlockQ8_0 {
  uint16_t scale;  // f16 bits
  int8_t q[kQ8Block];
};
static_assert(sizeof(BlockQ8_0) == 34, "GGUF packs Q8_0 blocks in 34 bytes");

// Bytes of `n` consecutive weights of `type` (n a whole number of blocks for Q8_0).
constexpr int64_t WeightBytes(WeightType type, int64_t n) {
  switch (type) {
    case WeightType::kF32: return 4 * n;
    case WeightType::kF16:
    case WeightType::kBF16: return 2 * n;
    case WeightType::kQ8_0: return n / kQ8Block * int64_t{sizeof(BlockQ8_0)};
  }
  return 0;
}

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_WEIGHT_TYPE_H_
