#include "models/llama3_rope.h"

#include <cmath>

namespace toyllm {

std::vector<float> Llama3RopeFactors(float theta, int head_dim, const Llama3RopeScaling& s) {
  const float low_freq_wavelen = s.original_context / s.low_freq_factor;
  const float high_freq_wavelen = s.original_context / s.high_freq_factor;
  std::vector<float> factors;
  for (int i = 0; i < head_dim; i += 2) {
    const float freq = 1.0f / powf(theta, static_cast<float>(i) / head_dim);
    const float wavelen = 2.0f * static_cast<float>(M_PI) / freq;  // positions per turn
    if (wavelen < high_freq_wavelen) {
      factors.push_back(1.0f);
    } else if (wavelen > low_freq_wavelen) {
      factors.push_back(s.factor);
    } else {
      const float smooth = (s.original_context / wavelen - s.low_freq_factor) /
                           (s.high_freq_factor - s.low_freq_factor);
      factors.push_back(1.0f / ((1.0f - smooth) / s.factor + smooth));
    }
  }
  return factors;
}

}  // namespace toyllm
