#include "tools/cli/ablation_flags.h"

#include "absl/strings/str_cat.h"

namespace toyllm {

void AddAblationFlags(AblationFlags& f, std::vector<Flag>& list, const std::string& heads_flag) {
  list.insert(list.end(), {
      {"", heads_flag, "heads to ablate, LAYER.HEAD[,LAYER.HEAD...], e.g. 2.0", &f.heads},
      {"", "--ablate-mode", "zero: the heads' outputs set to 0 (default); mean: set to their mean "
                            "over the positions of --ablate-ref", &f.mode},
      {"", "--ablate-ref", "reference text of --ablate-mode mean (default: the prompt itself)", &f.reference},
  });
}

absl::StatusOr<std::unique_ptr<HeadAblation>> MakeAblation(const AblationFlags& f, LoadedModel& model,
                                                           const std::vector<int>& prompt,
                                                           const std::string& heads_flag) {
  if (f.mode != "zero" && f.mode != "mean") {
    return absl::InvalidArgumentError(absl::StrCat("--ablate-mode: '", f.mode, "' is neither zero nor mean"));
  }
  if (f.heads.empty()) return nullptr;
  const ModelConfig& config = model.file->config;
  absl::StatusOr<std::vector<HeadRef>> heads = ParseHeadList(heads_flag, f.heads, config);
  if (!heads.ok()) return heads.status();
  if (f.mode == "zero") return std::make_unique<HeadAblation>(*std::move(heads), config.head_dim);
  std::vector<int> reference = prompt;
  if (!f.reference.empty()) {
    absl::StatusOr<std::vector<int>> ids = EncodePrompt(model, f.reference);
    if (!ids.ok()) return absl::Status(ids.status().code(), absl::StrCat("--ablate-ref: ", ids.status().message()));
    reference = *std::move(ids);
  }
  absl::StatusOr<HeadAblation> mean = HeadAblation::Mean(*std::move(heads), *model.transformer, reference);
  if (!mean.ok()) return mean.status();
  return std::make_unique<HeadAblation>(*std::move(mean));
}

absl::StatusOr<std::unique_ptr<HeadAblation>> AttachAblation(const AblationFlags& f, LoadedModel& model,
                                                             const std::vector<int>& prompt) {
  absl::StatusOr<std::unique_ptr<HeadAblation>> ablation = MakeAblation(f, model, prompt);
  if (ablation.ok()) model.transformer->set_intervention(ablation->get());
  return ablation;
}

}  // namespace toyllm
