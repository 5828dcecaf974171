#include "tools/inspect/explain.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace toyllm {
namespace {

// The block's input: the embedding for layer 0, the previous block's output after.
std::pair<Tap, int> BlockInput(int layer) {
  return layer == 0 ? std::pair{Tap::kEmbed, -1} : std::pair{Tap::kResidPost, layer - 1};
}

// Rows 0..n-1, each cut to [offset, offset + width).
std::vector<std::vector<float>> Slices(const std::vector<std::vector<float>>& rows, int n, int offset, int width) {
  std::vector<std::vector<float>> out;
  for (int p = 0; p < n; ++p) out.emplace_back(rows[p].begin() + offset, rows[p].begin() + offset + width);
  return out;
}

}  // namespace

std::set<std::pair<Tap, int>> ExplainTaps(int layer) {
  return {BlockInput(layer),     {Tap::kAttnNorm, layer}, {Tap::kQRaw, layer},    {Tap::kKRaw, layer},
          {Tap::kQNormed, layer}, {Tap::kKNormed, layer},  {Tap::kQ, layer},       {Tap::kK, layer},
          {Tap::kV, layer},       {Tap::kScores, layer},   {Tap::kWeights, layer}, {Tap::kKqvOut, layer}};
}

absl::StatusOr<ExplainedAttention> ExplainAttention(const ModelConfig& c, const ModelWeights& weights,
                                                    const TapRecorder& recorder, int layer, int head, int query) {
  if (layer < 0 || layer >= c.n_layers) {
    return absl::InvalidArgumentError(absl::StrCat("layer: ", layer, " is outside 0..", c.n_layers - 1));
  }
  if (head < 0 || head >= c.n_heads) {
    return absl::InvalidArgumentError(absl::StrCat("head: ", head, " is outside 0..", c.n_heads - 1));
  }
  const std::pair<Tap, int> input = BlockInput(layer);
  const auto* x = recorder.Rows(input.first, input.second);
  const auto* head_weights = recorder.Rows(Tap::kWeights, layer, head);
  if (x == nullptr || head_weights == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("layer ", layer, "'s taps were not recorded"));
  }
  if (query < 0 || query >= static_cast<int>(x->size())) {
    return absl::InvalidArgumentError(absl::StrCat("position: ", query, " is outside 0..", x->size() - 1));
  }
  ExplainedAttention e;
  const int d = c.head_dim, n = query + 1;
  e.layer = layer;
  e.head = head;
  e.kv_head = head / c.group_size();
  e.head_dim = d;
  e.query = query;
  e.sqrt_dk = std::sqrt(static_cast<float>(d));
  e.normed = c.norm != NormKind::kNone;
  e.rotated = c.rope_layout != RopeLayout::kNone;
  e.x = Slices(*x, n, 0, c.dim);
  e.h = Slices(*recorder.Rows(Tap::kAttnNorm, layer), n, 0, c.dim);
  e.q_raw = Slices(*recorder.Rows(Tap::kQRaw, layer), n, head * d, d);
  e.k_raw = Slices(*recorder.Rows(Tap::kKRaw, layer), n, e.kv_head * d, d);
  e.v = Slices(*recorder.Rows(Tap::kV, layer), n, e.kv_head * d, d);
  if (c.qkv_bias) {  // the same for every token: it shifts where q, k and v sit
    const LayerWeights& lw = weights.layers[layer];
    e.bias_q.assign(lw.bq + head * d, lw.bq + (head + 1) * d);
    e.bias_k.assign(lw.bk + e.kv_head * d, lw.bk + (e.kv_head + 1) * d);
    e.bias_v.assign(lw.bv + e.kv_head * d, lw.bv + (e.kv_head + 1) * d);
  }
  if (c.qk_norm) {
    e.q_normed = Slices(*recorder.Rows(Tap::kQNormed, layer), n, head * d, d);
    e.k_normed = Slices(*recorder.Rows(Tap::kKNormed, layer), n, e.kv_head * d, d);
  }
  e.q = Slices(*recorder.Rows(Tap::kQ, layer), n, head * d, d);
  e.k = Slices(*recorder.Rows(Tap::kK, layer), n, e.kv_head * d, d);
  const auto& scores = (*recorder.Rows(Tap::kScores, layer, head))[query];
  e.scaled_scores.assign(scores.begin(), scores.begin() + n);
  e.weights.assign((*head_weights)[query].begin(), (*head_weights)[query].begin() + n);
  e.out = Slices(*recorder.Rows(Tap::kKqvOut, layer), n, head * d, d)[query];
  return e;
}

}  // namespace toyllm
