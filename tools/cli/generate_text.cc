#include "tools/cli/generate_text.h"

#include "tokenizer/text_stream.h"

namespace toyllm {

std::vector<int> StopTokens(const Tokenizer& tokenizer) {
  // The end-of-generation tokens (EOS, EOT, <|im_end|>, ...) end a sequence; the
  // TinyStories checkpoints also use BOS as the story delimiter.
  std::vector<int> stop;
  for (int id = 0; id < tokenizer.vocab_size(); ++id) {
    if (tokenizer.IsEndOfGeneration(id) || id == tokenizer.bos_id()) stop.push_back(id);
  }
  return stop;
}

absl::StatusOr<std::string> GenerateText(LoadedModel& model, const std::vector<int>& prompt, int n,
                                         const SamplerOptions& sampling) {
  if (absl::Status s = ValidateSamplerOptions(sampling); !s.ok()) return s;
  GenerateOptions options;
  options.n_predict = n;
  options.stop_tokens = StopTokens(*model.tokenizer);
  Sampler sampler(sampling);
  TextStream stream(*model.tokenizer);
  std::string text = stream.Push(prompt);
  absl::StatusOr<GenerateStats> stats =
      Generate(*model.transformer, sampler, prompt, options, [&](int id) { text += stream.Push({id}); });
  if (!stats.ok()) return stats.status();
  return text + stream.Finish();
}

}  // namespace toyllm
