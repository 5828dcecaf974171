// Taps: the forward pass offers each intermediate to an optional observer under a stable
// name (llama.cpp's, where it has one). Every inspection tool is such an observer, so what
// it shows is what generation computed.
#ifndef TOYLLM_RUNTIME_TAPS_H_
#define TOYLLM_RUNTIME_TAPS_H_

#include <string>

namespace toyllm {

enum class Tap {
  kEmbed,       // "embed": token embeddings, the first residual stream [n, dim]
  kAttnNorm,    // "blk.L.attn_norm" [n, dim]
  kQRaw,        // "blk.L.q_raw": h·W_Q (+ bias, where the model has one) before RoPE
                //   [n, n_heads * head_dim]
  kKRaw,        // "blk.L.k_raw": h·W_K (+ bias) before RoPE [n, n_kv_heads * head_dim]
  kQNormed,     // "blk.L.q_normed": q_raw with each head RMS-normalised, only for models
                //   with q/k norms (Qwen 3) [n, n_heads * head_dim]
  kKNormed,     // "blk.L.k_normed": the same for k_raw [n, n_kv_heads * head_dim]
  kQ,           // "blk.L.q" after RoPE [n, n_heads * head_dim]
  kK,           // "blk.L.k" after RoPE [n, n_kv_heads * head_dim]
  kV,           // "blk.L.v" [n, n_kv_heads * head_dim]
  kScores,      // "blk.L.scores": q·k/√d_k of one head before softmax [n, keys]
  kWeights,     // "blk.L.weights": the same after the causal softmax [n, keys]
  kKqvOut,      // "blk.L.kqv_out": every head's weights·v, concatenated [n, n_heads * head_dim]
  kAttnOut,     // "blk.L.attn_out": after the output projection [n, dim]
  kResidMid,    // "blk.L.resid_mid": residual stream after attention [n, dim]
  kFfnNorm,     // "blk.L.ffn_norm" [n, dim]
  kFfnOut,      // "blk.L.ffn_out" [n, dim]
  kResidPost,   // "blk.L.resid_post": the block's output, the next block's input [n, dim]
  kFinalNorm,   // "final_norm" [n, dim]
  kLogits,      // "logits" [n, vocab]
};

// The stable name, e.g. "blk.3.q" or "logits".
std::string TapName(Tap tap, int layer);

// One intermediate: `rows` positions starting at `pos`, each `cols` floats, row-major.
// Scores and weights come one head at a time, with key positions 0..cols-1.
struct TapData {
  Tap tap;
  int layer = -1;  // -1 outside the blocks
  int head = -1;   // -1 unless per head
  int pos = 0;
  int rows = 0;
  int cols = 0;
  const float* data = nullptr;
};

class TapObserver {
 public:
  virtual ~TapObserver() = default;
  // Called during Forward; `data` is only valid during the call. Calls never overlap, but
  // a layer's per-head taps may come from the forward pass's worker threads, in any head
  // order.
  virtual void Observe(const TapData& tap) = 0;
};

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_TAPS_H_
