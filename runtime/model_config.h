// The engine's contract: every hyper-parameter the forward pass needs, as a plain struct.
// Readers in models/ fill it from a file; the runtime never assumes a constant.
#ifndef TOYLLM_RUNTIME_MODEL_CONFIG_H_
#define TOYLLM_RUNTIME_MODEL_CONFIG_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace toyllm {

// How RoPE pairs the coordinates of a head before rotating them.
enum class RopeLayout {
  kInterleaved,  // (0,1), (2,3), ...: Meta's and llama2.c's layout, llama.cpp "norm".
  kHalfSplit,    // (j, j + d/2): Hugging Face's rotate_half layout, llama.cpp "neox".
  kNone,         // no position encoding, as in the article's example
};

// How a sublayer's input is normalised.
enum class NormKind {
  kRmsNorm,  // x / sqrt(mean(x²) + eps) · g
  kNone,     // the input as it is, as in the article's example
};

struct ModelConfig {
  int dim = 0;             // width of the residual stream (embedding length)
  int hidden_dim = 0;      // width of the feed-forward layer; 0: the blocks have none
  int n_layers = 0;
  int n_heads = 0;         // query heads
  int n_kv_heads = 0;      // key/value heads; fewer than n_heads means grouped-query attention
  int head_dim = 0;        // d_k: width of one head's query, key and value
  int vocab_size = 0;
  int context_length = 0;  // positions the model was trained for
  float norm_eps = 1e-5f;
  float rope_theta = 10000.0f;
  RopeLayout rope_layout = RopeLayout::kInterleaved;
  NormKind norm = NormKind::kRmsNorm;
  bool tied_output = false;  // the output projection reuses the token embedding
  bool qkv_bias = false;     // q, k and v projections add a bias (Qwen 2)
  bool qk_norm = false;      // each head's q and k are RMS-normalised before RoPE (Qwen 3)
  // Llama 3.1's per-pair RoPE frequency divisors (GGUF rope_freqs.weight): head_dim / 2
  // values, pair j turning at θ_j / factor_j; empty when the model has none.
  std::vector<float> rope_freq_factors;

  int q_dim() const { return n_heads * head_dim; }
  int kv_dim() const { return n_kv_heads * head_dim; }
  // Query heads that share one key/value head.
  int group_size() const { return n_heads / n_kv_heads; }
};

// Checks that the numbers describe a runnable model: positive, mutually consistent and
// small enough that derived sizes cannot overflow.
absl::Status ValidateConfig(const ModelConfig& config);

// Number of float parameters in the model's matrices and norms.
int64_t ParameterCount(const ModelConfig& config);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_MODEL_CONFIG_H_
