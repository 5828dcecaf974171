// One completion on a leased slot: the prompt's ids through runtime/generate.h's loop with
// the request's sampler, the text cut at the first stop string, and each token's
// log-probability when asked. Text is handed on as it becomes final, so that streamed and
// whole answers are the same text.
#ifndef TOYLLM_TOOLS_SERVER_COMPLETION_H_
#define TOYLLM_TOOLS_SERVER_COMPLETION_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "tokenizer/token_text.h"
#include "tokenizer/tokenizer.h"
#include "tools/server/completion_request.h"
#include "tools/server/slot_pool.h"

namespace toyllm {

struct TokenLogprob {
  int id;
  float logprob;                           // log softmax of the model's logits
  std::vector<std::pair<int, float>> top;  // the most likely ids and their log-probabilities
};

struct CompletionDelta {
  std::string text;
  std::vector<TokenLogprob> logprobs;  // of the tokens generated since the last delta
};

struct CompletionResult {
  std::string text;
  std::vector<TokenLogprob> logprobs;
  std::string finish_reason;  // "stop" (end token or stop string) or "length"
  int prompt_tokens = 0;
  int completion_tokens = 0;
};

// Checks that the prompt and max_tokens fit `context`: OutOfRange otherwise.
absl::Status CheckFitsContext(int prompt_tokens, int max_tokens, int context);

// Runs the request. on_delta gets the text as it becomes final and returns false when no
// one listens any more; that, or keep_going saying no, ends generation at the next token.
// The slots take turns through `turns` for each forward pass.
absl::StatusOr<CompletionResult> RunCompletion(
    Transformer& transformer, TurnTaking& turns, const Tokenizer& tokenizer,
    const std::vector<int>& prompt, const CompletionRequest& request,
    const std::function<bool(const CompletionDelta&)>& on_delta,
    const std::function<bool()>& keep_going);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_SERVER_COMPLETION_H_
