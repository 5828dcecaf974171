#include "runtime/rope.h"

#include <cmath>

namespace toyllm {

Rope::Rope(int head_dim, float theta, RopeLayout layout, int n_positions,
           const std::vector<float>& freq_factors)
    : head_dim_(head_dim), layout_(layout) {
  if (layout == RopeLayout::kNone) return;
  const int half = head_dim / 2;
  cos_.resize(static_cast<size_t>(n_positions) * half);
  sin_.resize(cos_.size());
  for (int pos = 0; pos < n_positions; ++pos) {
    for (int j = 0; j < half; ++j) {
      // Written as llama2.c writes it, so the angles agree to the last bit.
      float freq = 1.0f / powf(theta, (2 * j) / static_cast<float>(head_dim));
      // Llama 3.1 slows the low frequencies down, so that long contexts stay in the range
      // of angles seen in training.
      if (!freq_factors.empty()) freq /= freq_factors[j];
      const float angle = pos * freq;
      cos_[static_cast<size_t>(pos) * half + j] = cosf(angle);
      sin_[static_cast<size_t>(pos) * half + j] = sinf(angle);
    }
  }
}

void Rope::Apply(float* x, int n, int n_heads, int pos) const {
  if (layout_ == RopeLayout::kNone) return;
  const int half = head_dim_ / 2;
  // Pair j of a head is (2j, 2j+1) when interleaved and (j, j + half) when half-split.
  const int first_step = layout_ == RopeLayout::kInterleaved ? 2 : 1;
  const int partner = layout_ == RopeLayout::kInterleaved ? 1 : half;
  for (int t = 0; t < n; ++t) {
    const float* cos = &cos_[static_cast<size_t>(pos + t) * half];
    const float* sin = &sin_[static_cast<size_t>(pos + t) * half];
    for (int h = 0; h < n_heads; ++h) {
      float* head = x + (static_cast<size_t>(t) * n_heads + h) * head_dim_;
      for (int j = 0; j < half; ++j) {
        float* a = head + j * first_step;
        float* b = a + partner;
        const float a0 = *a, b0 = *b;
        *a = a0 * cos[j] - b0 * sin[j];
        *b = a0 * sin[j] + b0 * cos[j];
      }
    }
  }
}

}  // namespace toyllm
