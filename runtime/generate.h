// The generation loop: prefill the prompt in batches, then sample one token at a time and
// feed it back, until a stop token, the requested count or the end of the context.
#ifndef TOYLLM_RUNTIME_GENERATE_H_
#define TOYLLM_RUNTIME_GENERATE_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/sampler.h"
#include "runtime/transformer.h"

namespace toyllm {

struct GenerateOptions {
  int n_predict = 256;           // tokens to generate after the prompt; < 0 means no limit
  std::vector<int> stop_tokens;  // ids that end generation; they are not emitted
  // Optional hooks for callers that serve many requests: on_logits sees each step's logits
  // before the sampler turns them into probabilities (for log-probabilities), and
  // keep_going, asked after every emitted token, ends generation early when it says no
  // (a stop string, a client gone, a shutdown).
  std::function<void(absl::Span<const float>)> on_logits;
  std::function<bool()> keep_going;
};

struct GenerateStats {
  int prompt_tokens = 0;
  int generated_tokens = 0;
  double prefill_seconds = 0.0;
  double decode_seconds = 0.0;
};

// Runs `prompt` (non-empty, at most the context) through a fresh transformer and calls
// on_token with each generated id as soon as it is chosen.
absl::StatusOr<GenerateStats> Generate(Transformer& transformer, Sampler& sampler,
                                       absl::Span<const int> prompt,
                                       const GenerateOptions& options,
                                       const std::function<void(int)>& on_token);

// Runs `tokens` from position `pos` in batches of at most the transformer's batch size and
// returns the logits that `which` asks for: the last position's, or all of them [n, vocab].
absl::StatusOr<std::vector<float>> Prefill(Transformer& transformer,
                                           absl::Span<const int> tokens, int pos,
                                           Transformer::Logits which);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_GENERATE_H_
