// Activation patching: run a corrupted prompt with one component's value pasted in from the
// clean prompt's run, and measure how much of the clean answer comes back. A component that
// restores it carries the information that tells the two prompts apart.
#ifndef TOYLLM_TOOLS_INSPECT_ACTIVATION_PATCH_H_
#define TOYLLM_TOOLS_INSPECT_ACTIVATION_PATCH_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/intervention.h"
#include "runtime/transformer.h"
#include "tokenizer/tokenizer.h"
#include "tools/inspect/tap_recorder.h"

namespace toyllm {

struct PatchComponent {
  enum class Kind {
    kHead,      // a head's output at every position (its slice of blk.L.kqv_out)
    kResidual,  // the residual stream leaving block L at one position (blk.L.resid_post)
    kMlp,       // block L's MLP output at every position (blk.L.ffn_out)
  };
  Kind kind;
  int layer;
  int index = 0;  // the head of kHead, the position of kResidual
};

// Every component of a model: heads, then residuals by layer and position, then MLPs.
std::vector<PatchComponent> AllComponents(const ModelConfig& config, int positions);

class ActivationPatch : public Intervention {
 public:
  // The taps a recorder of the clean run must keep.
  static std::set<std::pair<Tap, int>> CleanTaps(int n_layers);

  // `clean` recorded CleanTaps() over a prompt as long as the one patched.
  ActivationPatch(const TapRecorder& clean, int head_dim) : clean_(clean), head_dim_(head_dim) {}

  void set_components(std::vector<PatchComponent> components) { components_ = std::move(components); }

  void Edit(Tap tap, int layer, int pos, int rows, int cols, float* data) override;

 private:
  const TapRecorder& clean_;
  int head_dim_;
  std::vector<PatchComponent> components_;
};

// What patching measures at the last position: the logit difference of two tokens ("A-B")
// or the probability of one ("A"). Tokens are vocabulary pieces, "▁" optional.
struct PatchMetric {
  std::string text;
  int a = -1;
  int b = -1;  // -1: the probability of a
  double Value(absl::Span<const float> logits) const;
};
absl::StatusOr<PatchMetric> ParsePatchMetric(const std::string& text, const Tokenizer& tokenizer);

// The metric restored by each component, 0 = the corrupted run's value, 1 = the clean run's.
struct PatchMap {
  std::vector<int> clean_ids, corrupt_ids;
  double clean = 0, corrupt = 0;  // the metric of each run
  int layers = 0, heads = 0, positions = 0;
  std::vector<float> head;      // [layers, heads]
  std::vector<float> residual;  // [layers, positions]
  std::vector<float> mlp;       // [layers]
};

// Runs the clean and the corrupted prompt (BOS first, the same length), then the corrupted
// one once per component with that component patched. Fails when the lengths differ or the
// metric is the same on both prompts (nothing to restore).
absl::StatusOr<PatchMap> PatchEachComponent(Transformer& transformer, const std::vector<int>& clean,
                                            const std::vector<int>& corrupt, const PatchMetric& metric);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_INSPECT_ACTIVATION_PATCH_H_
