#include "runtime/kernels/few_rows.h"

#include <vector>

#include "runtime/kernels/dequantize.h"

namespace toyllm {
namespace {

// b.row(j) as float32: the row itself, or decoded into `buffer`.
const float* RowFloats(const Matrix& b, int j, std::vector<float>& buffer) {
  if (b.type == WeightType::kF32) return static_cast<const float*>(b.row(j));
  buffer.resize(b.cols);
  Dequantize(b.type, b.row(j), b.cols, buffer.data());
  return buffer.data();
}

void DotsScalar(int m, float alpha, const float* a, int lda, const Matrix& b, float* c, int ldc) {
  std::vector<float> buffer;
  for (int j = 0; j < b.rows; ++j) {
    const float* row = RowFloats(b, j, buffer);
    for (int i = 0; i < m; ++i) {
      float dot = 0.0f;
      for (int e = 0; e < b.cols; ++e) dot += a[i * lda + e] * row[e];
      c[i * ldc + j] = alpha * dot;
    }
  }
}

void SumsScalar(int m, const float* a, int lda, const Matrix& b, float* c, int ldc) {
  std::vector<float> buffer;
  for (int i = 0; i < m; ++i) {
    for (int e = 0; e < b.cols; ++e) c[i * ldc + e] = 0.0f;
  }
  for (int j = 0; j < b.rows; ++j) {
    const float* row = RowFloats(b, j, buffer);
    for (int i = 0; i < m; ++i) {
      for (int e = 0; e < b.cols; ++e) c[i * ldc + e] += a[i * lda + j] * row[e];
    }
  }
}

}  // namespace

const FewRowsKernels kFewRowsScalar = {DotsScalar, SumsScalar};

bool FewRowsTake(CpuLevel level, int m, const Matrix& b) {
  if (m > kFewRows || (b.type != WeightType::kF32 && b.type != WeightType::kF16)) return false;
  return level == CpuLevel::kScalar || b.cols % 16 == 0;
}

const FewRowsKernels& FewRowsFor(CpuLevel level) {
  switch (level) {
    case CpuLevel::kAvx512: return kFewRowsAvx512;
    case CpuLevel::kAvx2: return kFewRowsAvx2;
    case CpuLevel::kScalar: break;
  }
  return kFewRowsScalar;
}

}  // namespace toyllm
