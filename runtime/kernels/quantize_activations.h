// Decode multiplies Q8_0 weights by an activation row quantized the same way, as llama.cpp
// does: 32 values as int8 sharing one scale. A block's 32 products are then integer
// multiply-adds (AVX-512 VNNI's vpdpbusd does 32 of them in one instruction), where widening
// every int8 weight to float32 first had made decode wait on arithmetic, not on memory.
// The quantization costs precision once per row: each value moves by at most half a step,
// amax/254 of its block.
#ifndef TOYLLM_RUNTIME_KERNELS_QUANTIZE_ACTIVATIONS_H_
#define TOYLLM_RUNTIME_KERNELS_QUANTIZE_ACTIVATIONS_H_

#include <cstdint>

#include "runtime/weight_type.h"

namespace toyllm {

struct ActivationBlock {
  float scale;  // value = q · scale, scale = max |value| / 127
  int8_t q[kQ8Block];
};

// The K-quants' activation block, llama.cpp's block_q8_K: 256 values as int8 sharing a
// float scale, and the sums of each 16 of them, which multiply the weights' per-group mins
// and offsets (a K-quant weight is an unsigned q minus something per group).
struct ActivationBlockK {
  float scale;  // value = q · scale, scale = −m / 127 for m the value of largest magnitude
  int8_t q[kSuperBlock];
  int16_t sums[kSuperBlock / 16];
};

// blocks[0, n / 32) = x[0, n) quantized (n a whole number of blocks). Every kernel uses
// this one function, so all instruction sets multiply the same integers.
void QuantizeActivations(const float* x, int n, ActivationBlock* blocks);

// blocks[0, n / 256) = x[0, n) quantized as llama.cpp's quantize_row_q8_K_ref does it
// (n a whole number of super-blocks).
void QuantizeActivationsK(const float* x, int n, ActivationBlockK* blocks);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_QUANTIZE_ACTIVATIONS_H_
