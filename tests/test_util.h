// Helpers that several test suites share: writing files, computing a model's logits,
// checking error messages, and running the toyllm binary as a subprocess.
#ifndef TOYLLM_TESTS_TEST_UTIL_H_
#define TOYLLM_TESTS_TEST_UTIL_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "models/model_file.h"
#include "runtime/model_config.h"
#include "runtime/transformer.h"
#include "runtime/weights.h"

namespace toyllm::testing {

// ---------------------------------------------------------------------------------------
// Files.

// Writes `bytes` to `path` (replacing what was there) and returns the path; a failed write
// fails the test.
std::string WriteFile(const std::string& path, const std::string& bytes);
// The same for the file `name` in `dir`.
std::string WriteFile(const std::string& dir, const std::string& name, const std::string& bytes);

// Whether anything (file, directory, ...) exists at `path`.
bool PathExists(const std::string& path);

// The names in a directory, without . and .., sorted; a directory that cannot be listed
// fails the test.
std::vector<std::string> ListDir(const std::string& dir);

// Removes `dir` with everything in it, but only if TempDir() really created it (TempDir
// falls back to the shared temp folder itself, which must stay).
void RemoveTempDir(const std::string& dir);

// Peak resident memory of this process, in KiB: bad files must not make a reader allocate.
int64_t PeakRssKiB();

// ---------------------------------------------------------------------------------------
// Logits.

// The first `n` (all when n >= 20) of twenty token ids spread over stories260K's
// vocabulary of 512, BOS (1), EOS (2) and unknown (0) included.
std::vector<int> MixedTokens(size_t n = 20);

// The logits of every position of `tokens`, [tokens.size(), vocab], from Prefill on a new
// transformer with `context_length` positions that takes at most `max_batch` tokens per
// Forward call; empty after reporting a failure.
std::vector<float> AllLogits(const ModelConfig& config, const ModelWeights& weights,
                             const std::vector<int>& tokens, int context_length,
                             int max_batch = Transformer::kDefaultMaxBatch);
// The same for a loaded model, with its own context length unless `context_length` is given.
std::vector<float> AllLogits(const ModelFile& model, const std::vector<int>& tokens,
                             std::optional<int> context_length = std::nullopt);

// Expects `actual` to have the sizes of `expected`: dim, hidden_dim, n_layers, n_heads,
// n_kv_heads, head_dim and vocab_size (neither the context length nor norm_eps or RoPE).
void ExpectSameDimensions(const ModelConfig& actual, const ModelConfig& expected);

// The largest |a[i] - b[i]|; expects equal sizes (and compares the common part otherwise).
float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b);

// A float32 array read from a .npy file.
struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;  // C order
};

// Reads a .npy file strictly: version 1.0, little-endian float32 ('<f4'), C order, and
// exactly as many bytes as the shape says; anything else is an error naming the file.
absl::StatusOr<NpyArray> ReadNpyFloat32(const std::string& path);

// ---------------------------------------------------------------------------------------
// Error messages.

// Expects `status` to be an error whose message contains `path` and every one of
// `phrases`, and prints the message.
void ExpectError(const absl::Status& status, const std::string& path,
                 const std::vector<std::string>& phrases);
template <typename T>
void ExpectError(const absl::StatusOr<T>& result, const std::string& path,
                 const std::vector<std::string>& phrases) {
  ExpectError(result.status(), path, phrases);
}

// ---------------------------------------------------------------------------------------
// The toyllm binary as a subprocess.

struct RunResult {
  bool started = false;
  bool timed_out = false;
  bool exited = false;
  int exit_code = -1;  // when exited
  int signal = 0;      // when killed by a signal
  std::string out;
  std::string err;
};

// How the run ended, and the start of its stdout and stderr.
std::string Describe(const RunResult& r);

// The arguments, each in single quotes, separated by spaces (for messages).
std::string QuotedArgs(const std::vector<std::string>& args);

// Runs `toyllm args...` the way a user does: arguments go to exec directly (no shell),
// stdin is /dev/null, stdout and stderr are captured separately through pipes. A run that
// takes longer than `timeout` is killed and fails the test instead of blocking the suite.
RunResult RunToyllm(const std::vector<std::string>& args,
                    std::chrono::seconds timeout = std::chrono::seconds(30));

// The run started and exited 0.
::testing::AssertionResult Succeeds(const RunResult& r);

}  // namespace toyllm::testing

#endif  // TOYLLM_TESTS_TEST_UTIL_H_
