#include "runtime/kernels/dequantize.h"

#include "runtime/cpu_features.h"
#include "runtime/weight_convert.h"

namespace toyllm {

void Dequantize(WeightType type, const void* data, int64_t n, float* out) {
  if (DetectedCpuLevel() >= CpuLevel::kAvx2) {
    DequantizeAvx2(type, data, n, out);
  } else {
    ToFloat32(type, data, n, out);
  }
}

}  // namespace toyllm
