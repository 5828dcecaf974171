// --ablate, --ablate-mode and --ablate-ref: the flags with which generate, logits,
// attention, lens and ablate remove heads from the model they run.
#ifndef TOYLLM_TOOLS_CLI_ABLATION_FLAGS_H_
#define TOYLLM_TOOLS_CLI_ABLATION_FLAGS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/cli/args.h"
#include "tools/cli/model_setup.h"
#include "tools/inspect/head_ablation.h"

namespace toyllm {

struct AblationFlags {
  std::string heads;          // "L.H[,L.H...]"; empty: no ablation
  std::string mode = "zero";  // "zero" or "mean"
  std::string reference;      // mean over this text (BOS first); empty: over the prompt
};

// Appends the three flags; `heads_flag` is their first's name ("--ablate", or "--heads"
// for `toyllm ablate`).
void AddAblationFlags(AblationFlags& flags, std::vector<Flag>& list, const std::string& heads_flag = "--ablate");

// The ablation the flags ask for on `model`, mean over --ablate-ref or else `prompt`; nullptr
// when no head is named. The caller attaches it (Transformer::set_intervention).
absl::StatusOr<std::unique_ptr<HeadAblation>> MakeAblation(const AblationFlags& flags, LoadedModel& model,
                                                           const std::vector<int>& prompt,
                                                           const std::string& heads_flag = "--ablate");

// MakeAblation, attached to the model's transformer: the returned object must outlive its use.
absl::StatusOr<std::unique_ptr<HeadAblation>> AttachAblation(const AblationFlags& flags, LoadedModel& model,
                                                             const std::vector<int>& prompt);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_ABLATION_FLAGS_H_
