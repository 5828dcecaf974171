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

void QuantizeActivationsK(const float* x, int n, ActivationBlockK* blocks) {
  for (int b = 0; b < n / kSuperBlock; ++b) {
    const float* v = x + b * kSuperBlock;
    ActivationBlockK& out = blocks[b];
    float max = 0.0f, amax = 0.0f;
    for (int j = 0; j < kSuperBlock; ++j) {
      if (std::fabs(v[j]) > amax) {
        amax = std::fabs(v[j]);
        max = v[j];
      }
    }
    // Not finite (a diverged model): zeros, as QuantizeActivations makes them, not a cast of NaN.
    const bool finite = amax > 0.0f && amax <= 3.4e38f;
    const float inverse = finite ? -127.0f / max : 0.0f;
    out.scale = finite ? 1.0f / inverse : 0.0f;
    for (int j = 0; j < kSuperBlock; ++j) {
      // |inverse · v| <= 127: max maps to −127 exactly. Round half to even, as ggml's nearest_int.
      const float q = v[j] * inverse;
      out.q[j] = static_cast<int8_t>(q >= -127.5f && q <= 127.5f ? std::min(127, static_cast<int>(std::nearbyint(q))) : 0);
    }
    for (int g = 0; g < kSuperBlock / 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += out.q[16 * g + j];
      out.sums[g] = static_cast<int16_t>(sum);
    }
  }
}

}  // namespace toyllm
