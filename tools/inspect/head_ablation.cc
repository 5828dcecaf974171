#include "tools/inspect/head_ablation.h"

#include <algorithm>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/generate.h"
#include "tools/inspect/tap_recorder.h"

namespace toyllm {

absl::StatusOr<std::vector<HeadRef>> ParseHeadList(const std::string& flag, const std::string& text,
                                                   const ModelConfig& config) {
  std::set<HeadRef> heads;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    const std::vector<absl::string_view> lh = absl::StrSplit(part, absl::MaxSplits('.', 1));
    HeadRef ref;
    if (lh.size() != 2 || !absl::SimpleAtoi(lh[0], &ref.layer) || !absl::SimpleAtoi(lh[1], &ref.head)) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": '", part, "' is not LAYER.HEAD, e.g. 2.0"));
    }
    if (ref.layer < 0 || ref.layer >= config.n_layers || ref.head < 0 || ref.head >= config.n_heads) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": head ", part, " is outside layers 0..",
                                                     config.n_layers - 1, " and heads 0..", config.n_heads - 1));
    }
    heads.insert(ref);
  }
  if (heads.empty()) return absl::InvalidArgumentError(absl::StrCat(flag, ": no head given (LAYER.HEAD[,...])"));
  return std::vector<HeadRef>(heads.begin(), heads.end());
}

HeadAblation::HeadAblation(std::vector<HeadRef> heads, int head_dim)
    : heads_(std::move(heads)), head_dim_(head_dim) {
  for (const HeadRef& h : heads_) replacement_[h].assign(head_dim, 0.0f);
}

absl::StatusOr<HeadAblation> HeadAblation::Mean(std::vector<HeadRef> heads, Transformer& transformer,
                                                absl::Span<const int> reference) {
  if (reference.empty()) return absl::InvalidArgumentError("the reference text for mean ablation is empty");
  std::set<std::pair<Tap, int>> taps;
  for (const HeadRef& h : heads) taps.insert({Tap::kKqvOut, h.layer});
  TapRecorder recorder(taps);
  transformer.set_observer(&recorder);
  absl::StatusOr<std::vector<float>> logits = Prefill(transformer, reference, 0, Transformer::Logits::kLast);
  transformer.set_observer(nullptr);
  if (!logits.ok()) return logits.status();
  const int d = transformer.config().head_dim;
  HeadAblation ablation(std::move(heads), d);
  for (auto& [h, mean] : ablation.replacement_) {
    const std::vector<std::vector<float>>& rows = *recorder.Rows(Tap::kKqvOut, h.layer);
    for (const std::vector<float>& row : rows) {
      for (int i = 0; i < d; ++i) mean[i] += row[h.head * d + i];
    }
    for (float& m : mean) m /= static_cast<float>(rows.size());
  }
  return ablation;
}

void HeadAblation::Edit(Tap tap, int layer, int /*pos*/, int rows, int cols, float* data) {
  if (tap != Tap::kKqvOut) return;
  for (const auto& [h, value] : replacement_) {
    if (h.layer != layer) continue;
    for (int r = 0; r < rows; ++r) {
      std::copy(value.begin(), value.end(), data + static_cast<size_t>(r) * cols + h.head * head_dim_);
    }
  }
}

}  // namespace toyllm
