#include "runtime/generate.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"

namespace toyllm {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

absl::StatusOr<std::vector<float>> Prefill(Transformer& transformer,
                                           absl::Span<const int> tokens, int pos,
                                           Transformer::Logits which) {
  std::vector<float> logits;
  for (size_t start = 0; start < tokens.size(); start += transformer.max_batch()) {
    const absl::Span<const int> batch = tokens.subspan(start, transformer.max_batch());
    const bool last_batch = start + batch.size() == tokens.size();
    // Only the batch holding the last position needs logits when just that one is asked for.
    absl::StatusOr<absl::Span<const float>> out =
        transformer.Forward(batch, pos + static_cast<int>(start), which);
    if (!out.ok()) return out.status();
    if (which == Transformer::Logits::kAll || last_batch) {
      logits.insert(logits.end(), out->begin(), out->end());
    }
  }
  return logits;
}

absl::StatusOr<GenerateStats> Generate(Transformer& transformer, Sampler& sampler,
                                       absl::Span<const int> prompt,
                                       const GenerateOptions& options,
                                       const std::function<void(int)>& on_token) {
  const int n_prompt = static_cast<int>(prompt.size());
  if (n_prompt == 0) return absl::InvalidArgumentError("the prompt has no tokens");
  if (n_prompt > transformer.context_length()) {
    return absl::OutOfRangeError(absl::StrCat("the prompt has ", n_prompt,
                                              " tokens, more than the context of ",
                                              transformer.context_length()));
  }
  GenerateStats stats;
  stats.prompt_tokens = n_prompt;
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<float>> logits =
      Prefill(transformer, prompt, 0, Transformer::Logits::kLast);
  if (!logits.ok()) return logits.status();
  stats.prefill_seconds = SecondsSince(start);

  start = std::chrono::steady_clock::now();
  int pos = n_prompt;
  while (options.n_predict < 0 || stats.generated_tokens < options.n_predict) {
    if (options.on_logits) options.on_logits(*logits);
    const int next = sampler.Sample(absl::MakeSpan(*logits));
    const auto& stops = options.stop_tokens;
    if (std::find(stops.begin(), stops.end(), next) != stops.end()) break;
    on_token(next);
    ++stats.generated_tokens;
    // The last token of a full context is emitted but has no position to be fed back at.
    if (pos == transformer.context_length()) break;
    if (options.n_predict >= 0 && stats.generated_tokens == options.n_predict) break;
    if (options.keep_going && !options.keep_going()) break;
    absl::StatusOr<absl::Span<const float>> step = transformer.Forward({next}, pos++);
    if (!step.ok()) return step.status();
    logits->assign(step->begin(), step->end());
  }
  stats.decode_seconds = SecondsSince(start);
  return stats;
}

}  // namespace toyllm
