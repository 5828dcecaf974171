// One test of `toyllm bench`, timed as llama-bench times it: a context sized to the test,
// a warm-up run, then repeated runs from an empty context.
#ifndef TOYLLM_TOOLS_CLI_BENCH_TEST_H_
#define TOYLLM_TOOLS_CLI_BENCH_TEST_H_

#include <string>

#include "absl/status/statusor.h"
#include "models/model_file.h"

namespace toyllm {

struct BenchTest {
  enum class Kind {
    kPrefill,  // "ppN": one forward pass over N tokens at positions 0..N-1
    kDecode,   // "tgN": N forward passes of one token each, positions 0..N-1
  };
  Kind kind;
  int tokens;
  // Decode with the attention maps recorded, as `generate --dump-attention` records them.
  bool capture = false;

  std::string Name() const;  // "pp512", "tg128", "tg128+attn"
};

// Tokens per second over the repetitions.
struct Speed {
  double median = 0;
  double min = 0;
  double max = 0;
};

// Runs `test` on random token ids once to warm up, then `repetitions` times, each from
// position 0 of a fresh KV cache exactly as long as the test, whatever context the model
// records. Uses the thread count set by SetThreadCount.
absl::StatusOr<Speed> TimeTest(const ModelFile& model, const BenchTest& test, int repetitions);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_BENCH_TEST_H_
