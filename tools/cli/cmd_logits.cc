// toyllm logits: the next-token logits at every position of the prompt, as a .npy file.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "tools/cli/ablation_flags.h"
#include "tools/cli/commands.h"
#include "tools/cli/model_setup.h"
#include "tools/inspect/npy_writer.h"
#include "tools/inspect/tap_recorder.h"

namespace toyllm {

absl::Status RunLogits(const std::vector<std::string>& argv) {
  ModelFlags model_flags;
  std::string output, hidden;
  AblationFlags ablation_flags;
  std::vector<Flag> flags = CommonFlags(model_flags, /*with_context=*/true);
  AddAblationFlags(ablation_flags, flags);
  flags.push_back({"-o", "--output", "the .npy file to write: float32 [prompt tokens, vocab]", &output});
  flags.push_back({"", "--hidden", "also write the residual stream after the embedding and after every "
                                   "block: float32 [layers + 1, prompt tokens, dim]", &hidden});
  Args args("logits", "Writes the logits the model predicts at every position of the prompt (BOS first).", flags);
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  if (output.empty()) return absl::InvalidArgumentError("no output file given (-o FILE.npy)");
  absl::StatusOr<LoadedModel> model = LoadForInference(model_flags);
  if (!model.ok()) return model.status();
  absl::StatusOr<std::vector<int>> prompt = EncodePrompt(*model, model_flags.prompt);
  if (!prompt.ok()) return prompt.status();
  absl::StatusOr<std::unique_ptr<HeadAblation>> ablation = AttachAblation(ablation_flags, *model, *prompt);
  if (!ablation.ok()) return ablation.status();
  const ModelConfig& config = model->file->config;
  std::set<std::pair<Tap, int>> taps = {{Tap::kEmbed, -1}};
  for (int l = 0; l < config.n_layers; ++l) taps.insert({Tap::kResidPost, l});
  TapRecorder recorder(taps);
  if (!hidden.empty()) model->transformer->set_observer(&recorder);
  absl::StatusOr<std::vector<float>> logits =
      Prefill(*model->transformer, *prompt, 0, Transformer::Logits::kAll);
  if (!logits.ok()) return logits.status();
  if (!hidden.empty()) {
    std::vector<float> stream;
    for (int stage = -1; stage < config.n_layers; ++stage) {
      for (const std::vector<float>& row : *recorder.Rows(stage < 0 ? Tap::kEmbed : Tap::kResidPost, stage)) {
        stream.insert(stream.end(), row.begin(), row.end());
      }
    }
    const int64_t t = static_cast<int64_t>(prompt->size());
    if (absl::Status s = WriteNpy(hidden, stream.data(), {config.n_layers + 1, t, config.dim}); !s.ok()) {
      return s;
    }
  }
  const int64_t vocab = model->file->config.vocab_size;
  if (absl::Status s = WriteNpy(output, logits->data(), {static_cast<int64_t>(prompt->size()), vocab});
      !s.ok()) {
    return s;
  }
  std::cerr << "wrote " << output << ": float32 [" << prompt->size() << ", " << vocab << "]\n";
  return absl::OkStatus();
}

}  // namespace toyllm
