#include <cstring>

#include "runtime/kernels/gemv.h"
#include "runtime/weight_convert.h"

namespace toyllm {
namespace {

// Per block: the integer dot product of the weights and the quantized activations, then
// both scales.
float DotQ8_0(const BlockQ8_0* blocks, const ActivationBlock* x, int cols) {
  float sum = 0.0f;
  for (int b = 0; b < cols / kQ8Block; ++b) {
    BlockQ8_0 block;
    std::memcpy(&block, &blocks[b], sizeof(block));  // GGUF may misalign a tensor
    int32_t block_sum = 0;
    for (int j = 0; j < kQ8Block; ++j) block_sum += block.q[j] * x[b].q[j];
    sum += HalfToFloat(block.scale) * x[b].scale * static_cast<float>(block_sum);
  }
  return sum;
}

float Dot16(const uint8_t* row, const float* x, int cols, float (*to_float)(uint16_t)) {
  float sum = 0.0f;
  for (int i = 0; i < cols; ++i) {
    uint16_t h;
    std::memcpy(&h, row + 2 * i, 2);
    sum += to_float(h) * x[i];
  }
  return sum;
}

}  // namespace

void GemvScalar(const Matrix& w, const GemvInput& x, int row_begin, int row_end, float* y) {
  for (int r = row_begin; r < row_end; ++r) {
    const void* row = w.row(r);
    switch (w.type) {
      case WeightType::kF32: {
        const float* v = static_cast<const float*>(row);
        float sum = 0.0f;
        for (int i = 0; i < w.cols; ++i) sum += v[i] * x.values[i];
        y[r] = sum;
        break;
      }
      case WeightType::kF16:
        y[r] = Dot16(static_cast<const uint8_t*>(row), x.values, w.cols, HalfToFloat);
        break;
      case WeightType::kBF16:
        y[r] = Dot16(static_cast<const uint8_t*>(row), x.values, w.cols, Bf16ToFloat);
        break;
      case WeightType::kQ8_0:
        y[r] = DotQ8_0(static_cast<const BlockQ8_0*>(row), x.blocks, w.cols);
        break;
    }
  }
}

}  // namespace toyllm
