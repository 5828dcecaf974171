// One test of `toyllm bench`, timed as llama-bench times it: a context sized to the test,
// a warm-up run, then repeated runs from an empty (or depth-filled) context.
#ifndef TOYLLM_TOOLS_CLI_BENCH_TEST_H_
#define TOYLLM_TOOLS_CLI_BENCH_TEST_H_

#include <string>

#include "absl/status/statusor.h"
#include "models/model_file.h"
#include "runtime/kv_cache.h"

namespace toyllm {

// Tokens per forward pass of a prompt longer than this: llama-bench's default micro-batch
// (-ub 512), which also bounds the scores' memory at long contexts.
inline constexpr int kPrefillBatch = 512;

struct BenchTest {
  int prompt = 0;  // "ppN": N prompt tokens, in forward passes of up to kPrefillBatch
  int gen = 0;     // "tgN": then N forward passes of one token each
  int depth = 0;   // tokens already in the KV cache (filled untimed) when the test starts
  // Decode with the attention maps recorded, as `generate --dump-attention` records them.
  bool capture = false;

  // llama-bench's names: "pp512", "tg128", "pp512+tg128", "tg128 @ d4096", "tg128+attn".
  std::string Name() const;
};

// Tokens per second over the repetitions: (prompt + gen) / seconds, as llama-bench counts.
struct Speed {
  double median = 0;
  double min = 0;
  double max = 0;
};

// Runs `test` on random token ids once to warm up, then `repetitions` times, each from
// position `depth` of a KV cache exactly as long as the test, whatever context the model
// records, its keys and values stored as `kv_types`. Uses the thread count set by
// SetThreadCount.
absl::StatusOr<Speed> TimeTest(const ModelFile& model, const BenchTest& test, int repetitions,
                               KvTypes kv_types = {});

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_BENCH_TEST_H_
