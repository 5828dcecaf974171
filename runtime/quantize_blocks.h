// Quantizing float32 weights into ggml's block types, with the searches llama.cpp's
// reference quantizers (ggml-quants.c, quantize_row_*_ref, no importance matrix) make, so a
// file toyllm writes is about as close to its float32 weights as llama-quantize's.
#ifndef TOYLLM_RUNTIME_QUANTIZE_BLOCKS_H_
#define TOYLLM_RUNTIME_QUANTIZE_BLOCKS_H_

#include "runtime/weight_type.h"

namespace toyllm {

// Writes one block of `type` (IsBlockQuantized, not Q8_0) for BlockShapeOf(type).elements
// values of x to `out` (BlockShapeOf(type).bytes, any alignment).
void QuantizeBlock(WeightType type, const float* x, void* out);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_QUANTIZE_BLOCKS_H_
