#include "runtime/kernels/gemv.h"

namespace toyllm {

GemvKernel GemvFor(CpuLevel level) {
  switch (level) {
    case CpuLevel::kAvx512: return GemvAvx512;
    case CpuLevel::kAvx2: return GemvAvx2;
    case CpuLevel::kScalar: break;
  }
  return GemvScalar;
}

void Gemv(const Matrix& w, const GemvInput& x, int row_begin, int row_end, float* y) {
  static const GemvKernel kernel = GemvFor(DetectedCpuLevel());
  kernel(w, x, row_begin, row_end, y);
}

}  // namespace toyllm
