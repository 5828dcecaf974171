#include "runtime/model_config.h"

#include <cmath>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace toyllm {
namespace {

// Ceilings far above any real model of this architecture; they keep every derived size
// (layer * dim * hidden, context * kv_dim, ...) well inside int64 and reject corrupt headers.
constexpr int kMaxWidth = 1 << 16;
constexpr int kMaxHidden = 1 << 18;
constexpr int kMaxLayers = 1024;
constexpr int kMaxHeads = 1024;
constexpr int kMaxVocab = 1 << 22;
constexpr int kMaxContext = 1 << 22;

absl::Status CheckRange(const char* name, int value, int max) {
  if (value < 1 || value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " = ", value, " is outside 1..", max));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateConfig(const ModelConfig& c) {
  for (auto [name, value, max] : {
           std::tuple{"dim", c.dim, kMaxWidth},
           std::tuple{"n_layers", c.n_layers, kMaxLayers},
           std::tuple{"n_heads", c.n_heads, kMaxHeads},
           std::tuple{"n_kv_heads", c.n_kv_heads, kMaxHeads},
           std::tuple{"head_dim", c.head_dim, kMaxWidth},
           std::tuple{"vocab_size", c.vocab_size, kMaxVocab},
           std::tuple{"context_length", c.context_length, kMaxContext},
       }) {
    if (absl::Status s = CheckRange(name, value, max); !s.ok()) return s;
  }
  if (c.hidden_dim < 0 || c.hidden_dim > kMaxHidden) {
    return absl::InvalidArgumentError(
        absl::StrCat("hidden_dim = ", c.hidden_dim, " is outside 0..", kMaxHidden));
  }
  if (c.n_heads % c.n_kv_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "n_kv_heads = ", c.n_kv_heads, " does not divide n_heads = ", c.n_heads));
  }
  if (c.head_dim % 2 != 0 && c.rope_layout != RopeLayout::kNone) {
    return absl::InvalidArgumentError(
        absl::StrCat("head_dim = ", c.head_dim, " is odd; RoPE rotates pairs"));
  }
  if (int64_t{c.n_heads} * c.head_dim > kMaxWidth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "n_heads * head_dim = ", int64_t{c.n_heads} * c.head_dim, " exceeds ", kMaxWidth));
  }
  if (!(c.norm_eps > 0.0f && c.norm_eps < 1.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("norm_eps = ", c.norm_eps, " is outside (0, 1)"));
  }
  if (!(c.rope_theta > 1.0f && std::isfinite(c.rope_theta))) {
    return absl::InvalidArgumentError(absl::StrCat("rope_theta = ", c.rope_theta, " must be > 1"));
  }
  if (!c.rope_freq_factors.empty()) {
    if (static_cast<int>(c.rope_freq_factors.size()) != c.head_dim / 2) {
      return absl::InvalidArgumentError(absl::StrCat("rope_freq_factors has ", c.rope_freq_factors.size(),
                                                     " values, expected head_dim / 2 = ", c.head_dim / 2));
    }
    for (float f : c.rope_freq_factors) {
      if (!(f > 0.0f && std::isfinite(f))) {
        return absl::InvalidArgumentError(absl::StrCat("rope frequency factor ", f, " is not positive"));
      }
    }
  }
  return absl::OkStatus();
}

int64_t ParameterCount(const ModelConfig& c) {
  const int64_t dim = c.dim;
  const int64_t norms = c.norm == NormKind::kNone ? 0 : 2 * dim;
  const int64_t per_layer = norms                                    // attention and ffn norms
                            + dim * c.q_dim() * 2                     // wq, wo
                            + dim * c.kv_dim() * 2                    // wk, wv
                            + dim * int64_t{c.hidden_dim} * 3         // w1, w2, w3
                            + (c.qkv_bias ? c.q_dim() + 2 * c.kv_dim() : 0)
                            + (c.qk_norm ? 2 * c.head_dim : 0);
  const int64_t embedding = int64_t{c.vocab_size} * dim;
  return embedding + c.n_layers * per_layer + (norms > 0 ? dim : 0) +
         (c.tied_output ? 0 : embedding) + static_cast<int64_t>(c.rope_freq_factors.size());
}

}  // namespace toyllm
