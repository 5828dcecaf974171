// Conversions between float32 and the element types weights are stored in: f16, bf16,
// Q8_0 (blocks of 32 int8 weights sharing one f16 scale, ggml's block_q8_0) and ggml's
// other block types (runtime/quant_blocks.h, through quant_unpack and quantize_blocks). The scalar
// reference for every type; the kernels in runtime/kernels/ are checked against it.
#ifndef TOYLLM_RUNTIME_WEIGHT_CONVERT_H_
#define TOYLLM_RUNTIME_WEIGHT_CONVERT_H_

#include <cstdint>
#include <string>

#include "runtime/weight_type.h"

namespace toyllm {

float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);  // round to nearest even
float Bf16ToFloat(uint16_t b);
uint16_t FloatToBf16(float f);  // round to nearest even

// Decodes n weights of `type` (n a whole number of blocks) into float32. `data` needs no
// alignment: GGUF places tensors at any offset its alignment key allows.
void ToFloat32(WeightType type, const void* data, int64_t n, float* out);

// Encodes n float32 weights as `type`; appends the bytes to *out.
void FromFloat32(WeightType type, const float* in, int64_t n, std::string* out);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_WEIGHT_CONVERT_H_
