#include "runtime/taps.h"

#include "absl/strings/str_cat.h"

namespace toyllm {

std::string TapName(Tap tap, int layer) {
  const auto block = [layer](const char* name) { return absl::StrCat("blk.", layer, ".", name); };
  switch (tap) {
    case Tap::kEmbed: return "embed";
    case Tap::kAttnNorm: return block("attn_norm");
    case Tap::kQRaw: return block("q_raw");
    case Tap::kKRaw: return block("k_raw");
    case Tap::kQNormed: return block("q_normed");
    case Tap::kKNormed: return block("k_normed");
    case Tap::kQ: return block("q");
    case Tap::kK: return block("k");
    case Tap::kV: return block("v");
    case Tap::kScores: return block("scores");
    case Tap::kWeights: return block("weights");
    case Tap::kKqvOut: return block("kqv_out");
    case Tap::kAttnOut: return block("attn_out");
    case Tap::kResidMid: return block("resid_mid");
    case Tap::kFfnNorm: return block("ffn_norm");
    case Tap::kFfnOut: return block("ffn_out");
    case Tap::kResidPost: return block("resid_post");
    case Tap::kFinalNorm: return "final_norm";
    case Tap::kLogits: return "logits";
  }
  return "unknown";
}

}  // namespace toyllm
