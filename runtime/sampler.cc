#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "runtime/ops.h"

namespace toyllm {

absl::Status ValidateSamplerOptions(const SamplerOptions& o) {
  if (!(o.temperature >= 0.0f && std::isfinite(o.temperature))) {
    return absl::InvalidArgumentError(
        absl::StrCat("temperature ", o.temperature, " must be a finite number >= 0"));
  }
  if (o.top_k < 0) {
    return absl::InvalidArgumentError(absl::StrCat("top-k ", o.top_k, " must be >= 0"));
  }
  if (!(o.top_p > 0.0f && o.top_p <= 1.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("top-p ", o.top_p, " must be in (0, 1]"));
  }
  if (o.seed == 0) return absl::InvalidArgumentError("seed must not be 0 (xorshift stays at 0)");
  return absl::OkStatus();
}

uint32_t Rng::NextU32() {
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  return static_cast<uint32_t>((state_ * 0x2545F4914F6CDD1Dull) >> 32);
}

float Rng::NextFloat() { return (NextU32() >> 8) / 16777216.0f; }

int Argmax(absl::Span<const float> values) {
  return static_cast<int>(std::max_element(values.begin(), values.end()) - values.begin());
}

Sampler::Sampler(const SamplerOptions& options) : options_(options), rng_(options.seed) {}

int Sampler::Sample(absl::Span<float> logits) {
  if (options_.temperature == 0.0f) return Argmax(logits);
  for (float& l : logits) l /= options_.temperature;
  Softmax(logits.data(), static_cast<int>(logits.size()));
  if (options_.top_k > 0 && options_.top_k < static_cast<int>(logits.size())) KeepTopK(logits);
  const float coin = rng_.NextFloat();
  if (options_.top_p < 1.0f) return SampleTopP(logits, coin);
  // Multinomial: the first token whose cumulative probability exceeds the coin.
  float cdf = 0.0f;
  for (size_t i = 0; i < logits.size(); ++i) {
    cdf += logits[i];
    if (coin < cdf) return static_cast<int>(i);
  }
  return static_cast<int>(logits.size()) - 1;  // rounding left the sum just under the coin
}

void Sampler::KeepTopK(absl::Span<float> probs) {
  std::vector<float> sorted(probs.begin(), probs.end());
  std::nth_element(sorted.begin(), sorted.begin() + (options_.top_k - 1), sorted.end(),
                   std::greater<float>());
  const float threshold = sorted[options_.top_k - 1];
  // Ties at the threshold keep the lowest ids, so exactly k tokens survive.
  int kept_at_threshold = static_cast<int>(
      options_.top_k - std::count_if(probs.begin(), probs.end(),
                                     [threshold](float p) { return p > threshold; }));
  float sum = 0.0f;
  for (float& p : probs) {
    if (p < threshold || (p == threshold && kept_at_threshold-- <= 0)) p = 0.0f;
    sum += p;
  }
  for (float& p : probs) p /= sum;
}

int Sampler::SampleTopP(absl::Span<const float> probs, float coin) {
  // Tokens below this probability cannot be in the nucleus, so they need not be sorted.
  const int n = static_cast<int>(probs.size());
  if (n == 1) return 0;
  const float cutoff = (1.0f - options_.top_p) / (n - 1);
  candidates_.clear();
  for (int i = 0; i < n; ++i) {
    if (probs[i] >= cutoff) candidates_.push_back({probs[i], i});
  }
  if (candidates_.empty()) return Argmax(probs);  // a nucleus so small that no token reaches it
  std::sort(candidates_.begin(), candidates_.end(),
            [](const Candidate& a, const Candidate& b) { return a.prob > b.prob; });
  // Truncate where the cumulative probability first exceeds top_p.
  float cumulative = 0.0f;
  size_t last = candidates_.size() - 1;
  for (size_t i = 0; i < candidates_.size(); ++i) {
    cumulative += candidates_[i].prob;
    if (cumulative > options_.top_p) {
      last = i;
      break;
    }
  }
  const float r = coin * cumulative;
  float cdf = 0.0f;
  for (size_t i = 0; i <= last; ++i) {
    cdf += candidates_[i].prob;
    if (r < cdf) return candidates_[i].id;
  }
  return candidates_[last].id;
}

}  // namespace toyllm
