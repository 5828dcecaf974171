// toyllm ablate: what the model does without some heads. On a prompt, the greedy
// continuation with and without them; on a file of sentences with known referents
// (--heldout, e.g. models/coref_heldout.tsv), the accuracy of the greedy referent with no
// head ablated, with each single head ablated, and with the --heads set ablated.
#include <algorithm>
#include <iostream>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/ops.h"
#include "tokenizer/token_text.h"
#include "tools/cli/ablation_flags.h"
#include "tools/cli/commands.h"
#include "tools/cli/generate_text.h"
#include "tools/cli/model_setup.h"
#include "tools/inspect/referent_accuracy.h"

namespace toyllm {
namespace {

absl::StatusOr<std::string> GreedyText(LoadedModel& model, const std::vector<int>& prompt, int n) {
  SamplerOptions greedy;
  greedy.temperature = 0;
  return GenerateText(model, prompt, n, greedy);
}

// The `top` most likely next tokens after the prompt, with their probabilities.
absl::StatusOr<std::string> NextTokens(LoadedModel& model, const std::vector<int>& prompt, int top) {
  absl::StatusOr<std::vector<float>> logits = Prefill(*model.transformer, prompt, 0, Transformer::Logits::kLast);
  if (!logits.ok()) return logits.status();
  std::vector<float> probs = *std::move(logits);
  Softmax(probs.data(), static_cast<int>(probs.size()));
  std::vector<int> order(probs.size());
  std::iota(order.begin(), order.end(), 0);
  top = std::min<int>(top, static_cast<int>(order.size()));
  std::partial_sort(order.begin(), order.begin() + top, order.end(), [&](int a, int b) { return probs[a] > probs[b]; });
  std::string text;
  for (int i = 0; i < top; ++i) {
    absl::StrAppend(&text, absl::StrFormat(" '%s' %.3f", TokenText(*model.tokenizer, order[i]), probs[order[i]]));
  }
  return text;
}

absl::Status CompareContinuations(const AblationFlags& ablation_flags, LoadedModel& model,
                                  const std::string& prompt_text, int n) {
  absl::StatusOr<std::vector<int>> prompt = EncodePrompt(model, prompt_text);
  if (!prompt.ok()) return prompt.status();
  absl::StatusOr<std::unique_ptr<HeadAblation>> ablation = MakeAblation(ablation_flags, model, *prompt, "--heads");
  if (!ablation.ok()) return ablation.status();
  std::string report;
  for (HeadAblation* heads : {static_cast<HeadAblation*>(nullptr), ablation->get()}) {
    model.transformer->set_intervention(heads);
    absl::StatusOr<std::string> next = NextTokens(model, *prompt, 3);
    absl::StatusOr<std::string> text = next.ok() ? GreedyText(model, *prompt, n) : next.status();
    model.transformer->set_intervention(nullptr);
    if (!text.ok()) return text.status();
    absl::StrAppend(&report, heads == nullptr ? "no ablation" : absl::StrCat("ablated ", ablation_flags.heads),
                    ":\n  next token:", *next, "\n  greedy:     ", *text, "\n");
  }
  std::cout << report;
  return absl::OkStatus();
}

absl::Status HeldOutTable(const AblationFlags& ablation_flags, LoadedModel& model, const std::string& path) {
  absl::StatusOr<std::vector<ReferentSentence>> sentences = ReadReferentTsv(path);
  if (!sentences.ok()) return sentences.status();
  const ModelConfig& c = model.file->config;
  std::vector<std::string> rows = {""};
  for (int l = 0; l < c.n_layers; ++l) {
    for (int h = 0; h < c.n_heads; ++h) rows.push_back(absl::StrCat(l, ".", h));
  }
  if (!ablation_flags.heads.empty()) rows.push_back(ablation_flags.heads);
  std::string table;
  for (const std::string& heads : rows) {
    AblationFlags flags = ablation_flags;
    flags.heads = heads;
    const InterventionFor ablate = [&](const std::vector<int>& ids) -> absl::StatusOr<std::unique_ptr<Intervention>> {
      absl::StatusOr<std::unique_ptr<HeadAblation>> a = MakeAblation(flags, model, ids, "--heads");
      if (!a.ok()) return a.status();
      return std::unique_ptr<Intervention>(*std::move(a));
    };
    absl::StatusOr<ReferentAccuracy> accuracy =
        GreedyReferentAccuracy(*model.transformer, *model.tokenizer, *sentences, ablate);
    if (!accuracy.ok()) return accuracy.status();
    if (table.empty()) {
      table = "| heads ablated |";
      for (const auto& [kind, score] : accuracy->by_kind) absl::StrAppend(&table, " ", kind, " |");
      absl::StrAppend(&table, " all |\n|---|");
      for (size_t i = 0; i <= accuracy->by_kind.size(); ++i) absl::StrAppend(&table, "---|");
      absl::StrAppend(&table, "\n");
    }
    absl::StrAppend(&table, "| ", heads.empty() ? "none" : heads, " |");
    for (const auto& [kind, score] : accuracy->by_kind) {
      absl::StrAppend(&table, absl::StrFormat(" %d/%d (%.1f%%) |", score.right, score.total, 100 * score.rate()));
    }
    absl::StrAppend(&table, absl::StrFormat(" %d/%d (%.1f%%) |\n", accuracy->all.right, accuracy->all.total,
                                            100 * accuracy->all.rate()));
  }
  std::cout << table;
  return absl::OkStatus();
}

}  // namespace

absl::Status RunAblate(const std::vector<std::string>& argv) {
  ModelFlags model_flags;
  AblationFlags ablation_flags;
  int n_predict = 1;
  std::string heldout;
  std::vector<Flag> flags = CommonFlags(model_flags, /*with_context=*/true);
  AddAblationFlags(ablation_flags, flags, "--heads");
  flags.insert(flags.end(), {
      {"-n", "--n-predict", "greedy tokens to generate after the prompt (default 1)", &n_predict},
      {"", "--heldout", "TSV of kind, prompt, referent, other noun: print the greedy referent's accuracy "
                        "with no head, each single head and the --heads set ablated", &heldout},
  });
  Args args("ablate",
            "Shows what the model does without some heads: the greedy continuation of -p with and\n"
            "without --heads, or (--heldout) a table of referent accuracy per ablated head.",
            flags);
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  if (heldout.empty() && ablation_flags.heads.empty()) {
    return absl::InvalidArgumentError("no --heads given (LAYER.HEAD[,...]) and no --heldout file");
  }
  if (n_predict < 0) return absl::InvalidArgumentError(absl::StrCat("--n-predict: ", n_predict, " is negative"));
  absl::StatusOr<LoadedModel> model = LoadForInference(model_flags);
  if (!model.ok()) return model.status();
  if (!heldout.empty()) return HeldOutTable(ablation_flags, *model, heldout);
  return CompareContinuations(ablation_flags, *model, model_flags.prompt, n_predict);
}

}  // namespace toyllm
