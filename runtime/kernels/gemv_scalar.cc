#include <cstring>

#include "runtime/kernels/gemv.h"
#include "runtime/quant_unpack.h"
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

// Per block of any other quantized type, with integers only inside the block:
//   Σ_i w_i·x_i = sx·(d·Σ_g scale_g·(Σ q·qx − offset·sum_g) − dmin·Σ_g min_g·sum_g)
// over its groups g of 16, sum_g the activations' integer sum over the group.
float DotBlocks(WeightType type, const uint8_t* row, const GemvInput& x, int cols) {
  const BlockShape shape = BlockShapeOf(type);
  UnpackedBlock w;
  float sum = 0.0f;
  for (int b = 0; b < cols / shape.elements; ++b) {
    UnpackBlock(type, row + b * shape.bytes, &w);
    const int8_t* qx = IsKQuant(type) ? x.k_blocks[b].q : x.blocks[b].q;
    const float sx = IsKQuant(type) ? x.k_blocks[b].scale : x.blocks[b].scale;
    int32_t scaled = 0, mins = 0;
    for (int g = 0; g < shape.elements / 16; ++g) {
      int32_t dot = 0, group_sum = 0;
      for (int j = 16 * g; j < 16 * g + 16; ++j) {
        dot += w.q[j] * qx[j];
        group_sum += qx[j];
      }
      scaled += w.scale[g] * (dot - w.offset * group_sum);
      mins += w.min[g] * group_sum;
    }
    sum += sx * (w.d * static_cast<float>(scaled) - w.dmin * static_cast<float>(mins));
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
      default:
        y[r] = DotBlocks(w.type, static_cast<const uint8_t*>(row), x, w.cols);
        break;
    }
  }
}

}  // namespace toyllm
