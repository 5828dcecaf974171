#include "tools/cli/bench_test.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/transformer.h"
#include "tools/page/attention_output.h"
#include "tools/inspect/tap_recorder.h"

namespace toyllm {
namespace {

// Token ids drawn uniformly from the vocabulary: the speed does not depend on them.
std::vector<int> RandomTokens(int n, int vocab_size) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> id(0, vocab_size - 1);
  std::vector<int> tokens(n);
  for (int& t : tokens) t = id(rng);
  return tokens;
}

// Forward passes over tokens[begin, end) at their positions, at most kPrefillBatch at once.
absl::Status Prefill(Transformer& transformer, const std::vector<int>& tokens, int begin, int end) {
  for (int pos = begin; pos < end; pos += kPrefillBatch) {
    const int n = std::min(kPrefillBatch, end - pos);
    if (absl::Status s = transformer.Forward({&tokens[pos], static_cast<size_t>(n)}, pos).status(); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// Seconds one run of the test takes on `transformer`, starting at position test.depth
// (the cache's earlier positions hold what the depth fill left there).
absl::StatusOr<double> RunOnce(Transformer& transformer, const BenchTest& test,
                               const std::vector<int>& tokens) {
  // A fresh recorder per run, as each generate run has its own.
  std::vector<int> layers(transformer.config().n_layers);
  std::iota(layers.begin(), layers.end(), 0);
  std::optional<TapRecorder> recorder;
  if (test.capture) recorder.emplace(AttentionTaps(layers));
  transformer.set_observer(recorder ? &*recorder : nullptr);

  const int start_pos = test.depth, decode_pos = test.depth + test.prompt;
  const auto start = std::chrono::steady_clock::now();
  if (absl::Status s = Prefill(transformer, tokens, start_pos, decode_pos); !s.ok()) return s;
  for (int pos = decode_pos; pos < decode_pos + test.gen; ++pos) {
    if (absl::Status s = transformer.Forward({tokens[pos]}, pos).status(); !s.ok()) return s;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  transformer.set_observer(nullptr);
  return seconds;
}

}  // namespace

std::string BenchTest::Name() const {
  std::string name = prompt > 0 ? absl::StrCat("pp", prompt) : "";
  if (gen > 0) absl::StrAppend(&name, prompt > 0 ? "+" : "", "tg", gen);
  if (capture) absl::StrAppend(&name, "+attn");
  if (depth > 0) absl::StrAppend(&name, " @ d", depth);
  return name;
}

absl::StatusOr<Speed> TimeTest(const ModelFile& model, const BenchTest& test, int repetitions,
                               KvTypes kv_types) {
  const int length = test.depth + test.prompt + test.gen;
  const int max_batch = std::max(1, std::min(kPrefillBatch, std::max(test.prompt, test.depth)));
  absl::StatusOr<std::unique_ptr<Transformer>> transformer =
      Transformer::Create(model.config, model.weights, length, max_batch, kv_types);
  if (!transformer.ok()) {
    return absl::Status(transformer.status().code(),
                        absl::StrCat(test.Name(), ": ", transformer.status().message()));
  }
  const std::vector<int> tokens = RandomTokens(length, model.config.vocab_size);
  if (absl::Status s = Prefill(**transformer, tokens, 0, test.depth); !s.ok()) return s;
  std::vector<double> tok_s;
  for (int run = 0; run <= repetitions; ++run) {  // run 0 warms up
    absl::StatusOr<double> seconds = RunOnce(**transformer, test, tokens);
    if (!seconds.ok()) return seconds.status();
    if (run > 0) tok_s.push_back((test.prompt + test.gen) / std::max(*seconds, 1e-9));
  }
  std::sort(tok_s.begin(), tok_s.end());
  const size_t n = tok_s.size();
  return Speed{(tok_s[(n - 1) / 2] + tok_s[n / 2]) / 2, tok_s.front(), tok_s.back()};
}

}  // namespace toyllm
