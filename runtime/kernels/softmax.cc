#include "runtime/kernels/softmax.h"

#include <cmath>

namespace toyllm {

void SoftmaxScalar(float* x, int n) {
  float max = x[0];
  for (int i = 1; i < n; ++i) max = x[i] > max ? x[i] : max;
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    x[i] = expf(x[i] - max);
    sum += x[i];
  }
  for (int i = 0; i < n; ++i) x[i] /= sum;
}

SoftmaxKernel SoftmaxFor(CpuLevel level) {
  return level == CpuLevel::kScalar ? SoftmaxScalar : SoftmaxAvx2;
}

}  // namespace toyllm
