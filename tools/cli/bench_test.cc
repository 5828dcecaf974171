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

// Seconds one run of the test takes on `transformer`, starting at position 0.
absl::StatusOr<double> RunOnce(Transformer& transformer, const BenchTest& test,
                               const std::vector<int>& tokens) {
  // A fresh recorder per run, as each generate run has its own.
  std::vector<int> layers(transformer.config().n_layers);
  std::iota(layers.begin(), layers.end(), 0);
  std::optional<TapRecorder> recorder;
  if (test.capture) recorder.emplace(AttentionTaps(layers));
  transformer.set_observer(recorder ? &*recorder : nullptr);

  const auto start = std::chrono::steady_clock::now();
  if (test.kind == BenchTest::Kind::kPrefill) {
    if (absl::Status s = transformer.Forward(tokens, 0).status(); !s.ok()) return s;
  } else {
    for (int pos = 0; pos < test.tokens; ++pos) {
      if (absl::Status s = transformer.Forward({tokens[pos]}, pos).status(); !s.ok()) return s;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  transformer.set_observer(nullptr);
  return seconds;
}

}  // namespace

std::string BenchTest::Name() const {
  return absl::StrCat(kind == Kind::kPrefill ? "pp" : "tg", tokens, capture ? "+attn" : "");
}

absl::StatusOr<Speed> TimeTest(const ModelFile& model, const BenchTest& test, int repetitions) {
  const int max_batch = test.kind == BenchTest::Kind::kPrefill ? test.tokens : 1;
  absl::StatusOr<std::unique_ptr<Transformer>> transformer =
      Transformer::Create(model.config, model.weights, test.tokens, max_batch);
  if (!transformer.ok()) {
    return absl::Status(transformer.status().code(),
                        absl::StrCat(test.Name(), ": ", transformer.status().message()));
  }
  const std::vector<int> tokens = RandomTokens(test.tokens, model.config.vocab_size);
  std::vector<double> tok_s;
  for (int run = 0; run <= repetitions; ++run) {  // run 0 warms up
    absl::StatusOr<double> seconds = RunOnce(**transformer, test, tokens);
    if (!seconds.ok()) return seconds.status();
    if (run > 0) tok_s.push_back(test.tokens / std::max(*seconds, 1e-9));
  }
  std::sort(tok_s.begin(), tok_s.end());
  const size_t n = tok_s.size();
  return Speed{(tok_s[(n - 1) / 2] + tok_s[n / 2]) / 2, tok_s.front(), tok_s.back()};
}

}  // namespace toyllm
