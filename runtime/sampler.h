// The sampler turns next-token logits into the next token. Its procedure is llama2.c's,
// so that the same seed, temperature and top-p pick the same tokens as llama2.c run.c.
#ifndef TOYLLM_RUNTIME_SAMPLER_H_
#define TOYLLM_RUNTIME_SAMPLER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace toyllm {

struct SamplerOptions {
  float temperature = 1.0f;  // 0 picks the most likely token (greedy)
  int top_k = 0;             // keep the k most likely tokens; 0 keeps all
  float top_p = 0.9f;        // nucleus: the smallest set whose probability exceeds top_p; 1 keeps all
  uint64_t seed = 1;         // initial state of the random number generator; must not be 0
};

absl::Status ValidateSamplerOptions(const SamplerOptions& options);

// xorshift64*, llama2.c's generator: the same seed gives the same coins.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint32_t NextU32();
  float NextFloat();  // in [0, 1)

 private:
  uint64_t state_;
};

class Sampler {
 public:
  explicit Sampler(const SamplerOptions& options);

  // Picks a token from logits (which it overwrites with probabilities): argmax at
  // temperature 0; otherwise softmax(logits / temperature), top-k, top-p, then one coin.
  int Sample(absl::Span<float> logits);

 private:
  struct Candidate {
    float prob;
    int id;
  };

  // Keeps the k most probable tokens and renormalises.
  void KeepTopK(absl::Span<float> probs);
  int SampleTopP(absl::Span<const float> probs, float coin);

  SamplerOptions options_;
  Rng rng_;
  std::vector<Candidate> candidates_;
};

// Index of the largest value; the first one on ties.
int Argmax(absl::Span<const float> values);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_SAMPLER_H_
