#include "runtime/transformer.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/ops.h"
#include "runtime/physical_memory.h"
#include "runtime/weight_convert.h"

namespace toyllm {
namespace {

absl::Status CheckShape(const char* name, int layer, const Matrix& m, int rows, int cols) {
  if (m.data != nullptr && m.rows == rows && m.cols == cols) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("weight ", name, " of layer ", layer, " is [",
                                                 m.rows, ", ", m.cols, "], expected [", rows,
                                                 ", ", cols, "]"));
}

// The views a reader built must have the shapes the config implies: a mismatch would make
// the forward pass read outside the weights.
absl::Status CheckWeights(const ModelConfig& c, const ModelWeights& w) {
  if (static_cast<int>(w.layers.size()) != c.n_layers) {
    return absl::InvalidArgumentError(
        absl::StrCat("weights have ", w.layers.size(), " layers, config has ", c.n_layers));
  }
  const bool norms = c.norm != NormKind::kNone;
  if (norms && w.output_norm == nullptr) return absl::InvalidArgumentError("output norm is missing");
  absl::Status s = CheckShape("token_embedding", -1, w.token_embedding, c.vocab_size, c.dim);
  if (s.ok()) s = CheckShape("output", -1, w.output, c.vocab_size, c.dim);
  for (int l = 0; l < c.n_layers && s.ok(); ++l) {
    const LayerWeights& lw = w.layers[l];
    if (norms && (lw.attn_norm == nullptr || (c.hidden_dim > 0 && lw.ffn_norm == nullptr))) {
      return absl::InvalidArgumentError(absl::StrCat("a norm of layer ", l, " is missing"));
    }
    for (auto [name, m, rows, cols] :
         {std::tuple{"wq", &lw.wq, c.q_dim(), c.dim}, std::tuple{"wk", &lw.wk, c.kv_dim(), c.dim},
          std::tuple{"wv", &lw.wv, c.kv_dim(), c.dim}, std::tuple{"wo", &lw.wo, c.dim, c.q_dim()},
          std::tuple{"w1", &lw.w1, c.hidden_dim, c.dim},
          std::tuple{"w2", &lw.w2, c.dim, c.hidden_dim},
          std::tuple{"w3", &lw.w3, c.hidden_dim, c.dim}}) {
      if (rows == 0 || cols == 0) continue;  // no feed-forward layer
      if (s = CheckShape(name, l, *m, rows, cols); !s.ok()) break;
    }
    if (c.qkv_bias && (lw.bq == nullptr || lw.bk == nullptr || lw.bv == nullptr)) {
      return absl::InvalidArgumentError(absl::StrCat("a q/k/v bias of layer ", l, " is missing"));
    }
    if (c.qk_norm && (lw.q_norm == nullptr || lw.k_norm == nullptr)) {
      return absl::InvalidArgumentError(absl::StrCat("a q/k norm of layer ", l, " is missing"));
    }
  }
  return s;
}

// Hidden units of the feed-forward layer that one pass over a batch of n rows computes:
// all of them while the batch's gate and up fit in kFfnSliceFloats each (128 rows of
// llama3.2-1b's 8192), else whole 256-blocks of them (W2's columns are sliced with them,
// and 256 is a whole number of blocks of every type). Whole, 512 rows of those 8192 would
// be 32 MiB, over what a process may hold beyond its file and KV cache (64 MiB in all);
// in slices of 2048, 8 MiB. Prefill of llama3.2-1b q8_0 on Zen 5 ran 3 % slower than
// unsliced, as fast at f16.
constexpr int64_t kFfnSliceFloats = 1024 * 1024;

int FfnSlice(int hidden, int n) {
  if (int64_t{n} * hidden <= kFfnSliceFloats) return hidden;
  return static_cast<int>(std::max<int64_t>(1, kFfnSliceFloats / n / kSuperBlock) * kSuperBlock);
}

// What one hidden unit's silu costs in multiply-adds, about: an exponential and a division.
// ParallelFor weighs it against handing rows to the other threads.
constexpr int kSwiGluWork = 16;

}  // namespace

absl::StatusOr<std::unique_ptr<Transformer>> Transformer::Create(const ModelConfig& config,
                                                                 const ModelWeights& weights,
                                                                 int context_length,
                                                                 int max_batch, KvTypes kv_types) {
  if (absl::Status s = ValidateConfig(config); !s.ok()) return s;
  if (absl::Status s = CheckWeights(config, weights); !s.ok()) return s;
  if (context_length < 1 || context_length > (1 << 22)) {
    return absl::InvalidArgumentError(
        absl::StrCat("context length ", context_length, " is outside 1..", 1 << 22));
  }
  if (absl::Status s = KvCache::Check(config, kv_types); !s.ok()) return s;
  if (max_batch < 1) {
    return absl::InvalidArgumentError(absl::StrCat("batch size ", max_batch, " must be >= 1"));
  }
  const int64_t row_floats = int64_t{3} * config.dim + 3 * config.q_dim() +
                             2 * config.kv_dim() + 2 * config.hidden_dim + config.vocab_size;
  const int64_t threads = std::max(1u, std::thread::hardware_concurrency());  // a head's scores each
  const int64_t bytes = KvCache::Bytes(config, context_length, kv_types) +
                        max_batch * (row_floats + threads * context_length) * int64_t{sizeof(float)};
  if (bytes > PhysicalMemoryBytes()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "a context of ", context_length, " positions needs ", bytes >> 20,
        " MiB for the KV cache and activations, more than this machine's ",
        PhysicalMemoryBytes() >> 20, " MiB"));
  }
  return std::unique_ptr<Transformer>(
      new Transformer(config, weights, context_length, max_batch, kv_types));
}

Transformer::Transformer(const ModelConfig& config, const ModelWeights& weights,
                         int context_length, int max_batch, KvTypes kv_types)
    : config_(config),
      weights_(weights),
      context_length_(context_length),
      max_batch_(max_batch),
      rope_(config.head_dim, config.rope_theta, config.rope_layout, context_length,
            config.rope_freq_factors),
      cache_(config, context_length, kv_types) {
  const size_t n = max_batch;
  x_.resize(n * config.dim);
  h_.resize(n * config.dim);
  q_.resize(n * config.q_dim());
  k_.resize(n * config.kv_dim());
  v_.resize(n * config.kv_dim());
  attn_.resize(n * config.q_dim());
  out_.resize(n * config.dim);
  size_t ffn = 0;  // the most floats a slice of gate (and of up) holds, at any batch size
  for (int rows = 1; rows <= max_batch; ++rows) {
    ffn = std::max(ffn, size_t{1} * rows * FfnSlice(config.hidden_dim, rows));
  }
  gate_.resize(ffn);
  up_.resize(ffn);
}

absl::StatusOr<absl::Span<const float>> Transformer::Forward(absl::Span<const int> tokens,
                                                             int pos, Logits which) {
  const int n = static_cast<int>(tokens.size());
  if (n < 1 || n > max_batch_) {
    return absl::InvalidArgumentError(
        absl::StrCat("a forward batch of ", n, " tokens is outside 1..", max_batch_));
  }
  if (pos < 0 || pos > context_length_ - n) {
    return absl::OutOfRangeError(absl::StrCat("positions ", pos, "..", pos + n - 1,
                                              " do not fit a context of ", context_length_));
  }
  const ModelConfig& c = config_;
  const int dim = c.dim;
  for (int t = 0; t < n; ++t) {
    if (tokens[t] < 0 || tokens[t] >= c.vocab_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", tokens[t], " is outside the vocabulary 0..", c.vocab_size - 1));
    }
    // The article's x: each token's row of the embedding table starts the residual stream.
    const Matrix& embedding = weights_.token_embedding;
    ToFloat32(embedding.type, embedding.row(tokens[t]), dim, &x_[t * dim]);
  }
  Offer(Tap::kEmbed, -1, pos, n, dim, x_.data());

  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& w = weights_.layers[l];

    // Attention: q, k, v = h·W_Q, h·W_K, h·W_V with h = norm(x); rotate q and k by position.
    Normalize(x_.data(), w.attn_norm, n, h_.data());
    Offer(Tap::kAttnNorm, l, pos, n, dim, h_.data());
    Linear(h_.data(), n, {{w.wq, q_.data()}, {w.wk, k_.data()}, {w.wv, v_.data()}});
    if (c.qkv_bias) {  // Qwen 2: q = h·W_Q + b_Q, and so for k and v
      AddBias(q_.data(), w.bq, n, c.q_dim());
      AddBias(k_.data(), w.bk, n, c.kv_dim());
      AddBias(v_.data(), w.bv, n, c.kv_dim());
    }
    Offer(Tap::kQRaw, l, pos, n, c.q_dim(), q_.data());
    Offer(Tap::kKRaw, l, pos, n, c.kv_dim(), k_.data());
    if (c.qk_norm) {  // Qwen 3: every head's q and k get unit RMS, so q·k cannot grow unbounded
      NormalizeHeads(q_.data(), w.q_norm, n * c.n_heads);
      NormalizeHeads(k_.data(), w.k_norm, n * c.n_kv_heads);
      Offer(Tap::kQNormed, l, pos, n, c.q_dim(), q_.data());
      Offer(Tap::kKNormed, l, pos, n, c.kv_dim(), k_.data());
    }
    rope_.Apply(q_.data(), n, c.n_heads, pos);
    rope_.Apply(k_.data(), n, c.n_kv_heads, pos);
    Offer(Tap::kQ, l, pos, n, c.q_dim(), q_.data());
    Offer(Tap::kK, l, pos, n, c.kv_dim(), k_.data());
    Offer(Tap::kV, l, pos, n, c.kv_dim(), v_.data());
    cache_.Store(l, pos, n, k_.data(), v_.data());
    Attention(l, pos, n);
    Intervene(Tap::kKqvOut, l, pos, n, c.q_dim(), attn_.data());
    Offer(Tap::kKqvOut, l, pos, n, c.q_dim(), attn_.data());

    // x = x + out·W_O: the residual connection keeps the token's own vector.
    Linear(attn_.data(), n, w.wo, out_.data());
    Offer(Tap::kAttnOut, l, pos, n, dim, out_.data());
    AddInPlace(x_.data(), out_.data(), n * dim);
    Offer(Tap::kResidMid, l, pos, n, dim, x_.data());

    // Feed-forward: x = x + W2·(silu(W1·h) ⊙ W3·h) with h = norm(x).
    if (c.hidden_dim > 0) {
      Normalize(x_.data(), w.ffn_norm, n, h_.data());
      Offer(Tap::kFfnNorm, l, pos, n, dim, h_.data());
      FeedForward(w, n);
      Intervene(Tap::kFfnOut, l, pos, n, dim, out_.data());
      Offer(Tap::kFfnOut, l, pos, n, dim, out_.data());
      AddInPlace(x_.data(), out_.data(), n * dim);
    }
    Intervene(Tap::kResidPost, l, pos, n, dim, x_.data());
    Offer(Tap::kResidPost, l, pos, n, dim, x_.data());
  }

  // The top layer's vector becomes next-token logits: final norm, then the output projection.
  const int first = which == Logits::kLast ? n - 1 : 0;
  const int rows = n - first;
  // Sized by the rows asked for, not the batch: generation wants the last position's only,
  // and a prompt's 512 rows of a 32000-word vocabulary would be 62 MiB.
  if (logits_.size() < static_cast<size_t>(rows) * c.vocab_size) {
    logits_.resize(static_cast<size_t>(rows) * c.vocab_size);
  }
  Normalize(&x_[first * dim], weights_.output_norm, rows, &h_[first * dim]);
  Offer(Tap::kFinalNorm, -1, pos + first, rows, dim, &h_[first * dim]);
  Linear(&h_[first * dim], rows, weights_.output, logits_.data());
  Offer(Tap::kLogits, -1, pos + first, rows, c.vocab_size, logits_.data());
  return absl::Span<const float>(logits_.data(), static_cast<size_t>(rows) * c.vocab_size);
}

void Transformer::Normalize(const float* x, const float* weight, int n, float* out) const {
  const int dim = config_.dim;
  if (config_.norm == NormKind::kNone) {
    std::copy_n(x, static_cast<size_t>(n) * dim, out);
    return;
  }
  // A row per task, as FeedForward's SwiGLU: on the calling thread alone, a batch's norms
  // and silus kept the other threads waiting.
  ParallelFor(n, int64_t{n} * dim, [&](int t) {
    RmsNorm(out + static_cast<size_t>(t) * dim, x + static_cast<size_t>(t) * dim, weight, dim, config_.norm_eps);
  });
}

void Transformer::NormalizeHeads(float* x, const float* weight, int n_heads) const {
  const int d = config_.head_dim;
  for (int h = 0; h < n_heads; ++h) {
    float* head = x + static_cast<size_t>(h) * d;
    RmsNorm(head, head, weight, d, config_.norm_eps);
  }
}

void Transformer::Attention(int layer, int pos, int n) {
  const ModelConfig& c = config_;
  const int d_k = c.head_dim;
  const int n_keys = pos + n;
  const float scale = 1.0f / sqrtf(static_cast<float>(d_k));
  // Grouped-query attention: the g consecutive query heads of a group share one key/value
  // head. In decode (n = 1) a task takes a whole group: its g query rows lie side by side
  // in q_, so one product reads the group's cached keys and values once for all g heads.
  // In prefill a task takes one head, whose n rows are a position apart.
  const bool decode = n == 1;
  const int heads = decode ? c.group_size() : 1;     // query heads per task
  const int rows = decode ? heads : n;               // its rows of q, scores and out
  const int stride = decode ? d_k : c.q_dim();       // from one row of q (and out) to the next
  const auto task = [&](int task_index) {
    const int first = task_index * heads;
    const int kv_head = first / c.group_size();
    const float* q = &q_[first * d_k];
    const Matrix k = cache_.keys(layer, kv_head, n_keys);
    const Matrix v = cache_.values(layer, kv_head, n_keys);
    // The task's scores, then weights, in its thread's scratch: one head's (one group's in
    // decode) at a time, so a batch of 512 at 4096 positions needs 8 MiB a thread where all
    // 32 heads' took 256.
    thread_local std::vector<float> scratch;
    scratch.resize(static_cast<size_t>(rows) * n_keys);
    float* scores = scratch.data();  // head first + i: n rows from i·n
    float* out = &attn_[first * d_k];
    const auto offer = [&](Tap tap) {
      for (int h = first; h < first + heads; ++h) {
        Offer(tap, layer, pos, n, n_keys, scores + static_cast<size_t>(h - first) * n * n_keys, h);
      }
    };

    // scores = q·kᵀ/√d_k against every cached key.
    MatMulTransposed(rows, scale, q, stride, k, scores, n_keys);
    offer(Tap::kScores);

    // weights = softmax over the keys a row may see: position pos + t sees keys 0..pos+t;
    // the later ones get weight 0 (the causal mask). In decode every row is at t = 0.
    for (int r = 0; r < rows; ++r) {
      float* row = scores + r * n_keys;
      const int t = decode ? 0 : r;
      const int visible = pos + t + 1;
      Softmax(row, visible);
      std::fill(row + visible, row + n_keys, 0.0f);
    }
    const float* weights = scores;
    offer(Tap::kWeights);

    // out = weights·v: each position's new, context-aware vector.
    MatMul(rows, weights, n_keys, v, out, stride);
  };
  // The tasks are independent: they share the threads. Scores and weights·v cost
  // n·n_keys·d_k multiply-adds each per head.
  ParallelFor(c.n_heads / heads, int64_t{2} * n * n_keys * d_k * c.n_heads, task);
}

void Transformer::FeedForward(const LayerWeights& w, int n) {
  const int hidden = config_.hidden_dim;
  const int slice = FfnSlice(hidden, n);
  for (int first = 0; first < hidden; first += slice) {
    const int units = std::min(slice, hidden - first);
    // gate = silu(W1·h) ⊙ W3·h for these units, then their share of W2's product.
    Linear(h_.data(), n, {{Rows(w.w1, first, units), gate_.data()}, {Rows(w.w3, first, units), up_.data()}});
    ParallelFor(n, int64_t{kSwiGluWork} * n * units, [&](int t) {
      SwiGlu(&gate_[static_cast<size_t>(t) * units], &up_[static_cast<size_t>(t) * units], units);
    });
    Linear(gate_.data(), n, {{Columns(w.w2, first, units), out_.data(), /*add=*/first > 0}});
  }
}

void Transformer::Offer(Tap tap, int layer, int pos, int rows, int cols, const float* data,
                        int head) const {
  if (observer_ == nullptr) return;
  // Heads offer their scores and weights from the threads they run on: one at a time.
  std::lock_guard<std::mutex> lock(offer_mutex_);
  observer_->Observe(TapData{tap, layer, head, pos, rows, cols, data});
}

}  // namespace toyllm
