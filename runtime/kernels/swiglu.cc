#include "runtime/kernels/swiglu.h"

#include <cmath>

namespace toyllm {

void SwiGluScalar(float* gate, const float* up, int n) {
  for (int i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g * (1.0f / (1.0f + expf(-g))) * up[i];
  }
}

SwiGluKernel SwiGluFor(CpuLevel level) {
  return level == CpuLevel::kScalar ? SwiGluScalar : SwiGluAvx2;
}

}  // namespace toyllm
