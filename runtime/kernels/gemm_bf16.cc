#include "runtime/kernels/gemm_bf16.h"

#include <cmath>

#include "runtime/weight_convert.h"

namespace toyllm {
namespace {

// FloatToBf16, but subnormals become zeros of their sign, as the instructions make them.
uint32_t RoundToBf16(float value) {
  if (std::fpclassify(value) == FP_SUBNORMAL) return std::signbit(value) ? 0x8000u : 0;
  return FloatToBf16(value);
}

uint32_t Pair(const float* two) { return RoundToBf16(two[0]) | RoundToBf16(two[1]) << 16; }

}  // namespace

void PackBf16PanelsScalar(const float* x, int rows, int cols, Bf16Panels* out) {
  const int pairs = cols / 2, panels = (rows + 15) / 16;
  out->rows = rows;
  out->cols = cols;
  out->words.assign(static_cast<size_t>(panels) * pairs * 16, 0);
  for (int i = 0; i < rows; ++i) {
    uint32_t* panel = &out->words[static_cast<size_t>(i / 16) * pairs * 16];
    for (int p = 0; p < pairs; ++p) panel[16 * p + i % 16] = Pair(x + int64_t{i} * cols + 2 * p);
  }
}

void RoundToBf16PairsScalar(const float* in, int64_t n, uint32_t* out) {
  for (int64_t p = 0; p < n / 2; ++p) out[p] = Pair(in + 2 * p);
}

void GemmBf16Scalar(const Bf16Panels& x, const uint32_t* w, int rows, float* y, int ldy, bool add) {
  const int pairs = x.cols / 2;
  for (int i = 0; i < x.rows; ++i) {
    const uint32_t* panel = &x.words[static_cast<size_t>(i / 16) * pairs * 16];
    for (int r = 0; r < rows; ++r) {
      double sum = 0;
      for (int p = 0; p < pairs; ++p) {
        const uint32_t a = panel[16 * p + i % 16], b = w[int64_t{r} * pairs + p];
        sum += double{Bf16ToFloat(a & 0xFFFF)} * Bf16ToFloat(b & 0xFFFF) +
               double{Bf16ToFloat(a >> 16)} * Bf16ToFloat(b >> 16);
      }
      float& out = y[int64_t{i} * ldy + r];
      out = add ? out + static_cast<float>(sum) : static_cast<float>(sum);
    }
  }
}

}  // namespace toyllm
