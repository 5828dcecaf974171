// The decoder-only transformer: token ids in, next-token logits out, one forward pass over
// a batch of consecutive positions with a KV cache for the past.
#ifndef TOYLLM_RUNTIME_TRANSFORMER_H_
#define TOYLLM_RUNTIME_TRANSFORMER_H_

#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/intervention.h"
#include "runtime/kv_cache.h"
#include "runtime/model_config.h"
#include "runtime/rope.h"
#include "runtime/taps.h"
#include "runtime/weights.h"

namespace toyllm {

class Transformer {
 public:
  // Which positions of a batch need logits: the last one (generation) or all (scoring).
  enum class Logits { kLast, kAll };

  // Positions one Forward call takes at most; longer prompts go in several calls.
  static constexpr int kDefaultMaxBatch = 64;

  // `weights` must outlive the transformer. Fails if the context or the batch is out of
  // range, the cache cannot hold `kv_types`, or the KV cache would not fit in this
  // machine's memory.
  static absl::StatusOr<std::unique_ptr<Transformer>> Create(
      const ModelConfig& config, const ModelWeights& weights, int context_length,
      int max_batch = kDefaultMaxBatch, KvTypes kv_types = {});

  // Runs tokens at positions pos, pos+1, ...: their keys and values join the cache (which
  // must already hold positions 0..pos-1) and the logits come back, [vocab] for the last
  // position or [n, vocab] for all. The span stays valid until the next call.
  absl::StatusOr<absl::Span<const float>> Forward(absl::Span<const int> tokens, int pos,
                                                  Logits which = Logits::kLast);

  // Attaches an observer of the intermediates (nullptr detaches it).
  void set_observer(TapObserver* observer) { observer_ = observer; }

  // Attaches an intervention that may overwrite heads' outputs, MLP outputs and the
  // residual stream (nullptr detaches it). It must outlive the Forward calls it is on for.
  void set_intervention(Intervention* intervention) { intervention_ = intervention; }

  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  int context_length() const { return context_length_; }
  int max_batch() const { return max_batch_; }

 private:
  Transformer(const ModelConfig& config, const ModelWeights& weights, int context_length,
              int max_batch, KvTypes kv_types);

  // out = norm(x) for n rows, with the config's norm (a copy when there is none).
  void Normalize(const float* x, const float* weight, int n, float* out) const;

  // RMS-normalises each of n_heads consecutive head_dim-wide vectors of x in place.
  void NormalizeHeads(float* x, const float* weight, int n_heads) const;

  // out = softmax(q·kᵀ/√d_k)·v for every head, over cached keys 0..pos+t for row t.
  void Attention(int layer, int pos, int n);

  // out = W2·(silu(W1·h) ⊙ W3·h) for n rows of h, a slice of the hidden units at a time.
  void FeedForward(const LayerWeights& w, int n);

  void Offer(Tap tap, int layer, int pos, int rows, int cols, const float* data,
             int head = -1) const;
  void Intervene(Tap tap, int layer, int pos, int rows, int cols, float* data) {
    if (intervention_ != nullptr) intervention_->Edit(tap, layer, pos, rows, cols, data);
  }

  const ModelConfig config_;
  const ModelWeights& weights_;
  const int context_length_;
  const int max_batch_;
  const Rope rope_;
  KvCache cache_;
  TapObserver* observer_ = nullptr;
  Intervention* intervention_ = nullptr;
  mutable std::mutex offer_mutex_;

  // Activations of one batch, one row per position.
  std::vector<float> x_;       // residual stream [n, dim]
  std::vector<float> h_;       // normalised input of a sublayer [n, dim]
  std::vector<float> q_;       // [n, q_dim]
  std::vector<float> k_;       // [n, kv_dim]
  std::vector<float> v_;       // [n, kv_dim]
  std::vector<float> attn_;    // heads' outputs, concatenated [n, q_dim]
  std::vector<float> out_;     // a sublayer's output [n, dim]
  std::vector<float> gate_;    // [n, hidden units of a slice]
  std::vector<float> up_;      // [n, hidden units of a slice]
  std::vector<float> logits_;  // [rows asked for, vocab]
};

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_TRANSFORMER_H_
