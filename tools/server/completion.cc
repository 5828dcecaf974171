#include "tools/server/completion.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "runtime/generate.h"
#include "tokenizer/text_stream.h"

namespace toyllm {
namespace {

// log softmax(logits) into log_probs, and the top_n most likely ids (the first on ties).
void LogSoftmax(absl::Span<const float> logits, int top_n, std::vector<float>* log_probs,
                std::vector<std::pair<int, float>>* top) {
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l - max));
  const float log_sum = max + static_cast<float>(std::log(sum));
  log_probs->resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) (*log_probs)[i] = logits[i] - log_sum;
  std::vector<int> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  top_n = std::min<int>(top_n, static_cast<int>(ids.size()));
  std::partial_sort(ids.begin(), ids.begin() + top_n, ids.end(),
                    [&](int a, int b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
  top->clear();
  for (int i = 0; i < top_n; ++i) top->push_back({ids[i], (*log_probs)[ids[i]]});
}

// The text generated so far, released up to the point where no stop string can begin.
class StopScanner {
 public:
  explicit StopScanner(const std::vector<std::string>& stops) : stops_(stops) {}

  // Adds text; returns what may be released now. Sets stopped() once a stop string appears.
  std::string Add(const std::string& piece) {
    text_ += piece;
    size_t end = text_.size();
    for (const std::string& stop : stops_) {
      const size_t at = text_.find(stop);
      if (at != std::string::npos && at < end) {
        end = at;
        stopped_ = true;
      }
    }
    if (stopped_) {
      text_.resize(end);
    } else {
      // Hold back the longest tail that a stop string starts with.
      for (const std::string& stop : stops_) {
        for (size_t n = std::min(stop.size() - 1, text_.size()); n > 0; --n) {
          if (text_.compare(text_.size() - n, n, stop, 0, n) == 0) {
            end = std::min(end, text_.size() - n);
            break;
          }
        }
      }
    }
    std::string out = text_.substr(released_, end - released_);
    released_ = end;
    return out;
  }
  std::string Rest() {
    std::string out = text_.substr(released_);
    released_ = text_.size();
    return out;
  }
  bool stopped() const { return stopped_; }
  const std::string& text() const { return text_; }

 private:
  const std::vector<std::string>& stops_;
  std::string text_;
  size_t released_ = 0;
  bool stopped_ = false;
};

}  // namespace

absl::Status CheckFitsContext(int prompt_tokens, int max_tokens, int context) {
  if (prompt_tokens > context) {
    return absl::OutOfRangeError(absl::StrCat("the prompt is ", prompt_tokens,
                                              " tokens long, more than the context of ", context));
  }
  if (max_tokens >= 0 && prompt_tokens + max_tokens > context) {
    return absl::OutOfRangeError(absl::StrCat("the prompt's ", prompt_tokens, " tokens and max_tokens ",
                                              max_tokens, " exceed the context of ", context));
  }
  return absl::OkStatus();
}

absl::StatusOr<CompletionResult> RunCompletion(
    Transformer& transformer, TurnTaking& turns, const Tokenizer& tokenizer,
    const std::vector<int>& prompt, const CompletionRequest& request,
    const std::function<bool(const CompletionDelta&)>& on_delta,
    const std::function<bool()>& keep_going) {
  const int context = transformer.context_length();
  if (absl::Status s = CheckFitsContext(static_cast<int>(prompt.size()), request.max_tokens, context);
      !s.ok()) {
    return s;
  }
  CompletionResult result;
  result.prompt_tokens = static_cast<int>(prompt.size());
  GenerateOptions options;
  options.n_predict = request.max_tokens;
  // As toyllm generate: EOS ends a sequence, and the TinyStories checkpoints' BOS too.
  for (int id : {tokenizer.eos_id(), tokenizer.bos_id()}) {
    if (id >= 0) options.stop_tokens.push_back(id);
  }
  std::vector<float> log_probs;
  std::vector<std::pair<int, float>> top;
  if (request.logprobs) {
    options.on_logits = [&](absl::Span<const float> logits) {
      LogSoftmax(logits, request.top_logprobs, &log_probs, &top);
    };
  }
  TextStream stream(tokenizer);
  stream.Push(prompt);
  StopScanner scanner(request.stop);
  CompletionDelta delta;
  bool listening = true;
  options.keep_going = [&] { return listening && !scanner.stopped() && keep_going(); };
  auto hand_on = [&](std::string text) {
    delta.text += text;
    if (delta.text.empty() && delta.logprobs.empty()) return;
    listening = on_delta(delta) && listening;
    delta = CompletionDelta();
  };
  Sampler sampler(request.sampling);
  turns.Take();
  absl::StatusOr<GenerateStats> stats = Generate(transformer, sampler, prompt, options, [&](int id) {
    ++result.completion_tokens;
    if (scanner.stopped()) return;
    if (request.logprobs) {
      const TokenLogprob logprob{id, log_probs[id], top};
      delta.logprobs.push_back(logprob);
      result.logprobs.push_back(logprob);
    }
    // Writing to the network is nobody else's wait: the turn passes on meanwhile.
    turns.Release();
    hand_on(scanner.Add(stream.Push({id})));
    turns.Take();
  });
  turns.Release();
  if (!stats.ok()) return stats.status();
  if (!scanner.stopped()) hand_on(scanner.Add(stream.Finish()) + scanner.Rest());
  result.text = scanner.text();
  const bool out_of_room = result.prompt_tokens + result.completion_tokens > context;
  result.finish_reason =
      scanner.stopped() || (result.completion_tokens != request.max_tokens && !out_of_room) ? "stop" : "length";
  return result;
}

}  // namespace toyllm
