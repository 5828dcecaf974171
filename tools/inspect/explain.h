// One head's attention for one query, step by step as the article computes it by hand:
// each token's x (and normed h), its q, k, v (with the bias where the model has one), the
// per-head q/k norm where it has one, q and k after RoPE, the scores q·k/√d_k,
// the softmax weights and Σ weight·v. Every number is the forward pass's own, read from a
// TapRecorder; `toyllm explain` prints it and the server's /v1/inspect/explain sends it.
#ifndef TOYLLM_TOOLS_INSPECT_EXPLAIN_H_
#define TOYLLM_TOOLS_INSPECT_EXPLAIN_H_

#include <set>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/model_config.h"
#include "runtime/weights.h"
#include "tools/inspect/tap_recorder.h"

namespace toyllm {

struct ExplainedAttention {
  int layer = 0, head = 0, kv_head = 0, head_dim = 0;
  int query = 0;        // the query position; keys are 0..query
  float sqrt_dk = 1.0f;
  bool normed = false;  // the block normalises x into h first
  bool rotated = false; // RoPE turns q and k
  // This head's slices of b_Q, b_K, b_V; empty when the model has no q/k/v biases.
  std::vector<float> bias_q, bias_k, bias_v;
  // Per key position 0..query: the model's dim floats (x, h), this head's head_dim floats;
  // q_normed and k_normed stay empty when the model has no per-head q/k norm.
  std::vector<std::vector<float>> x, h, q_raw, k_raw, v, q_normed, k_normed, q, k;
  std::vector<float> scaled_scores;  // q·k / √d_k per key
  std::vector<float> weights;        // softmax of the scaled scores
  std::vector<float> out;            // Σ weight · v, head_dim floats
};

// The taps a recorder must keep to explain `layer`.
std::set<std::pair<Tap, int>> ExplainTaps(int layer);

// Checks layer, head and query against the model and the recorded positions; the biases
// come from `weights`, every other number from the recorder.
absl::StatusOr<ExplainedAttention> ExplainAttention(const ModelConfig& config, const ModelWeights& weights,
                                                    const TapRecorder& recorder, int layer, int head, int query);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_INSPECT_EXPLAIN_H_
