// The scalar reference of every block-quantized type but Q8_0: a block unpacked into plain
// integers, from which both dequantisation (ToFloat32) and the scalar GEMV compute. One
// form for all types, so that the faster kernels have one thing to agree with:
//   weight i = d·scale[i/16]·(q[i] − offset) − dmin·min[i/16]
// with q unsigned (at most 6 bits, but for IQ4_NL's looked-up values, 8), small integer
// scales and mins per group of 16 weights (a group of 32 repeats its scale), and the
// block's float d and dmin.
#ifndef TOYLLM_RUNTIME_QUANT_UNPACK_H_
#define TOYLLM_RUNTIME_QUANT_UNPACK_H_

#include <cstdint>

#include "runtime/weight_type.h"

namespace toyllm {

struct UnpackedBlock {
  int n;                    // weights: 32 or 256
  uint8_t q[kSuperBlock];
  int16_t scale[kSuperBlock / 16];
  int16_t min[kSuperBlock / 16];
  int offset;
  float d, dmin;
};

// `block` (any alignment) of a type with IsBlockQuantized(type) but not Q8_0.
void UnpackBlock(WeightType type, const void* block, UnpackedBlock* out);

// Weight i of an unpacked block.
inline float UnpackedWeight(const UnpackedBlock& b, int i) {
  return b.d * b.scale[i / 16] * static_cast<float>(b.q[i] - b.offset) - b.dmin * b.min[i / 16];
}

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_QUANT_UNPACK_H_
