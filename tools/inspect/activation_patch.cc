#include "tools/inspect/activation_patch.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "runtime/generate.h"
#include "runtime/ops.h"
#include "tokenizer/token_text.h"

namespace toyllm {
namespace {

// The id whose piece is `text`, else whose text as shown (TokenText: " on" for "▁on" and
// for byte-level "Ġon") is `text` or " " + `text`; -1 when there is none.
int FindPiece(const Tokenizer& tokenizer, const std::string& text) {
  for (int id = 0; id < tokenizer.vocab_size(); ++id) {
    if (tokenizer.Piece(id) == text) return id;
  }
  for (const std::string& shown : {text, " " + text}) {
    for (int id = 0; id < tokenizer.vocab_size(); ++id) {
      if (TokenText(tokenizer, id) == shown) return id;
    }
  }
  return -1;
}

}  // namespace

std::vector<PatchComponent> AllComponents(const ModelConfig& config, int positions) {
  std::vector<PatchComponent> all;
  using Kind = PatchComponent::Kind;
  for (int l = 0; l < config.n_layers; ++l) {
    for (int h = 0; h < config.n_heads; ++h) all.push_back({Kind::kHead, l, h});
  }
  for (int l = 0; l < config.n_layers; ++l) {
    for (int p = 0; p < positions; ++p) all.push_back({Kind::kResidual, l, p});
  }
  if (config.hidden_dim > 0) {
    for (int l = 0; l < config.n_layers; ++l) all.push_back({Kind::kMlp, l});
  }
  return all;
}

std::set<std::pair<Tap, int>> ActivationPatch::CleanTaps(int n_layers) {
  std::set<std::pair<Tap, int>> taps;
  for (int l = 0; l < n_layers; ++l) {
    for (Tap tap : {Tap::kKqvOut, Tap::kFfnOut, Tap::kResidPost}) taps.insert({tap, l});
  }
  return taps;
}

void ActivationPatch::Edit(Tap tap, int layer, int pos, int rows, int cols, float* data) {
  using Kind = PatchComponent::Kind;
  for (const PatchComponent& c : components_) {
    if (c.layer != layer) continue;
    const Tap source = c.kind == Kind::kHead ? Tap::kKqvOut : c.kind == Kind::kMlp ? Tap::kFfnOut : Tap::kResidPost;
    if (source != tap) continue;
    const std::vector<std::vector<float>>& clean = *clean_.Rows(tap, layer);
    for (int r = 0; r < rows; ++r) {
      const int position = pos + r;
      if (c.kind == Kind::kResidual && c.index != position) continue;
      const std::vector<float>& row = clean.at(position);
      const int first = c.kind == Kind::kHead ? c.index * head_dim_ : 0;
      const int width = c.kind == Kind::kHead ? head_dim_ : cols;
      std::copy_n(row.begin() + first, width, data + static_cast<size_t>(r) * cols + first);
    }
  }
}

double PatchMetric::Value(absl::Span<const float> logits) const {
  if (b >= 0) return static_cast<double>(logits[a]) - logits[b];
  std::vector<float> probs(logits.begin(), logits.end());
  Softmax(probs.data(), static_cast<int>(probs.size()));
  return probs[a];
}

absl::StatusOr<PatchMetric> ParsePatchMetric(const std::string& text, const Tokenizer& tokenizer) {
  PatchMetric metric;
  metric.text = text;
  const size_t dash = text.find('-');
  const std::string a = text.substr(0, dash);
  const std::string b = dash == std::string::npos ? "" : text.substr(dash + 1);
  if (a.empty() || (dash != std::string::npos && b.empty())) {
    return absl::InvalidArgumentError(absl::StrCat("--metric: '", text, "' is not TOKEN or TOKEN-TOKEN"));
  }
  for (const auto& [piece, id] : {std::pair{a, &metric.a}, std::pair{b, &metric.b}}) {
    if (piece.empty()) continue;
    *id = FindPiece(tokenizer, piece);
    if (*id < 0) {
      return absl::InvalidArgumentError(absl::StrCat("--metric: '", piece, "' is not a token of the vocabulary"));
    }
  }
  return metric;
}

absl::StatusOr<PatchMap> PatchEachComponent(Transformer& transformer, const std::vector<int>& clean,
                                            const std::vector<int>& corrupt, const PatchMetric& metric) {
  if (clean.size() != corrupt.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the clean prompt is ", clean.size(),
                                                   " tokens long and the corrupted one ", corrupt.size(),
                                                   ": patching needs the same length"));
  }
  const ModelConfig& c = transformer.config();
  const auto last = Transformer::Logits::kLast;
  TapRecorder recorder(ActivationPatch::CleanTaps(c.n_layers));
  transformer.set_observer(&recorder);
  absl::StatusOr<std::vector<float>> clean_logits = Prefill(transformer, clean, 0, last);
  transformer.set_observer(nullptr);
  if (!clean_logits.ok()) return clean_logits.status();
  absl::StatusOr<std::vector<float>> corrupt_logits = Prefill(transformer, corrupt, 0, last);
  if (!corrupt_logits.ok()) return corrupt_logits.status();

  PatchMap map;
  map.clean_ids = clean;
  map.corrupt_ids = corrupt;
  map.clean = metric.Value(*clean_logits);
  map.corrupt = metric.Value(*corrupt_logits);
  if (!(std::fabs(map.clean - map.corrupt) > 1e-9)) {
    return absl::InvalidArgumentError(absl::StrCat("--metric ", metric.text, " is ", map.clean,
                                                   " on both prompts: there is nothing to restore"));
  }
  map.layers = c.n_layers;
  map.heads = c.n_heads;
  map.positions = static_cast<int>(clean.size());
  map.head.resize(map.layers * map.heads);
  map.residual.resize(map.layers * map.positions);
  map.mlp.resize(map.layers);

  ActivationPatch patch(recorder, c.head_dim);
  transformer.set_intervention(&patch);
  for (const PatchComponent& component : AllComponents(c, map.positions)) {
    patch.set_components({component});
    absl::StatusOr<std::vector<float>> logits = Prefill(transformer, corrupt, 0, last);
    if (!logits.ok()) {
      transformer.set_intervention(nullptr);
      return logits.status();
    }
    const float restored = static_cast<float>((metric.Value(*logits) - map.corrupt) / (map.clean - map.corrupt));
    switch (component.kind) {
      case PatchComponent::Kind::kHead: map.head[component.layer * map.heads + component.index] = restored; break;
      case PatchComponent::Kind::kResidual: map.residual[component.layer * map.positions + component.index] = restored; break;
      case PatchComponent::Kind::kMlp: map.mlp[component.layer] = restored; break;
    }
  }
  transformer.set_intervention(nullptr);
  return map;
}

}  // namespace toyllm
