#include "runtime/kernels/quantize_activations.h"

#include <algorithm>
#include <cmath>

namespace toyllm {

void QuantizeActivations(const float* x, int n, ActivationBlock* blocks) {
  for (int b = 0; b < n / kQ8Block; ++b) {
    const float* v = x + b * kQ8Block;
    float amax = 0.0f;
    for (int j = 0; j < kQ8Block; ++j) amax = std::max(amax, std::fabs(v[j]));
    const float scale = amax / 127.0f;
    const float inverse = scale > 0.0f ? 1.0f / scale : 0.0f;
    blocks[b].scale = scale;
    for (int j = 0; j < kQ8Block; ++j) {
      const float q = v[j] * inverse;  // within ±127 (and a rounding error) when finite
      // Rounded half away from zero, by truncating: a cast the compiler inlines, where
      // nearbyint is a library call per value. A NaN or infinity (a diverged model) must
      // not reach the cast, which is undefined for it.
      const bool finite = q >= -127.5f && q <= 127.5f;
      blocks[b].q[j] = static_cast<int8_t>(finite ? static_cast<int>(q + (q < 0 ? -0.5f : 0.5f)) : 0);
    }
  }
}

}  // namespace toyllm
