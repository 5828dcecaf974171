// toyllm lens: the logit lens. The residual stream after the embedding and after each
// block, put through the final norm and the output projection as if it were the last
// layer, shows how the prediction forms layer by layer (the article's last paragraph).
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "tokenizer/token_text.h"
#include "tools/cli/ablation_flags.h"
#include "tools/cli/commands.h"
#include "tools/inspect/logit_lens.h"
#include "tools/cli/model_setup.h"
#include "tools/inspect/tap_recorder.h"

namespace toyllm {
namespace {

std::string Quoted(const Tokenizer& tokenizer, int id) {
  return absl::StrCat("'", absl::StrReplaceAll(TokenText(tokenizer, id), {{"\n", "\\n"}}), "'");
}

}  // namespace

absl::Status RunLens(const std::vector<std::string>& argv) {
  ModelFlags model_flags;
  int top = 5;
  AblationFlags ablation_flags;
  std::vector<Flag> flags = CommonFlags(model_flags, /*with_context=*/true);
  AddAblationFlags(ablation_flags, flags);
  flags.push_back({"", "--top", "most likely next tokens shown per layer (default 5)", &top});
  Args args("lens",
            "For every position of the prompt and every layer (after the embedding, after each\n"
            "block; the last is the model's real prediction), the most likely next tokens.",
            flags);
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  absl::StatusOr<LoadedModel> model = LoadForInference(model_flags);
  if (!model.ok()) return model.status();
  const ModelConfig& c = model->file->config;
  if (top < 1 || top > c.vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat("--top: ", top, " is outside 1..", c.vocab_size));
  }
  absl::StatusOr<std::vector<int>> ids = EncodePrompt(*model, model_flags.prompt);
  if (!ids.ok()) return ids.status();
  absl::StatusOr<std::unique_ptr<HeadAblation>> ablation = AttachAblation(ablation_flags, *model, *ids);
  if (!ablation.ok()) return ablation.status();

  TapRecorder recorder(LensTaps(c.n_layers));
  model->transformer->set_observer(&recorder);
  absl::StatusOr<std::vector<float>> logits = Prefill(*model->transformer, *ids, 0, Transformer::Logits::kLast);
  if (!logits.ok()) return logits.status();

  const Tokenizer& tokenizer = *model->tokenizer;
  std::string out;
  for (size_t p = 0; p < ids->size(); ++p) {
    absl::StrAppend(&out, absl::StrFormat("position %d %s → next token\n", p, Quoted(tokenizer, (*ids)[p])));
    const std::vector<std::vector<LensGuess>> stages = LensAt(*model->file, recorder, static_cast<int>(p), top);
    for (int stage = -1; stage < c.n_layers; ++stage) {
      const std::string name = stage < 0 ? "embed" : absl::StrCat("blk.", stage, stage == c.n_layers - 1 ? " (final)" : "");
      absl::StrAppend(&out, absl::StrFormat("  %-14s", name));
      for (const LensGuess& g : stages[stage + 1]) {
        absl::StrAppend(&out, absl::StrFormat(" %12s %.3f", Quoted(tokenizer, g.id), g.prob));
      }
      absl::StrAppend(&out, "\n");
    }
  }
  std::cout << out;
  return absl::OkStatus();
}

}  // namespace toyllm
