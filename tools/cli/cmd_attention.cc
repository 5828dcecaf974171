// toyllm attention: per-layer, per-head attention maps of a prompt, as files to load
// (attention.npy, tokens.json) and to look at (index.html with layerN.js, layerN.png).
#include <iostream>

#include "absl/strings/str_cat.h"
#include "tools/page/attention_output.h"
#include "tools/cli/ablation_flags.h"
#include "tools/cli/commands.h"
#include "tools/inspect/index_list.h"
#include "tools/cli/model_setup.h"

namespace toyllm {

absl::Status RunAttention(const std::vector<std::string>& argv) {
  ModelFlags model_flags;
  std::string output, layer_list, head_list;
  AblationFlags ablation_flags;
  std::vector<Flag> flags = CommonFlags(model_flags, /*with_context=*/true);
  AddAblationFlags(ablation_flags, flags);
  flags.insert(flags.end(), {
      {"-o", "--output", "folder to write the maps into (created if missing)", &output},
      {"", "--layers", "layers to keep, e.g. 0,2-4 (default: all)", &layer_list},
      {"", "--heads", "heads to keep, e.g. 0-3 (default: all)", &head_list},
  });
  Args args("attention",
            "Runs the prompt through the model and writes every chosen head's attention map:\n"
            "attention.npy float32 [layers, heads, T, T] (row i: query position i's softmax\n"
            "weights over the keys), tokens.json, index.html with the weights it shows per\n"
            "layer in layerN.js, and layerN.png.",
            flags);
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  if (output.empty()) return absl::InvalidArgumentError("no output folder given (-o DIR)");
  absl::StatusOr<LoadedModel> model = LoadForInference(model_flags);
  if (!model.ok()) return model.status();
  const ModelConfig& config = model->file->config;
  absl::StatusOr<std::vector<int>> layers = ParseIndexList("--layers", layer_list, config.n_layers);
  if (!layers.ok()) return layers.status();
  absl::StatusOr<std::vector<int>> heads = ParseIndexList("--heads", head_list, config.n_heads);
  if (!heads.ok()) return heads.status();
  absl::StatusOr<std::vector<int>> prompt = EncodePrompt(*model, model_flags.prompt);
  if (!prompt.ok()) return prompt.status();
  absl::StatusOr<std::unique_ptr<HeadAblation>> ablation = AttachAblation(ablation_flags, *model, *prompt);
  if (!ablation.ok()) return ablation.status();

  TapRecorder recorder(AttentionTaps(*layers));
  model->transformer->set_observer(&recorder);
  absl::StatusOr<std::vector<float>> logits =
      Prefill(*model->transformer, *prompt, 0, Transformer::Logits::kLast);
  if (!logits.ok()) return logits.status();
  absl::StatusOr<AttentionMaps> maps = AssembleMaps(recorder, *layers, *heads, *prompt, *model->tokenizer);
  if (!maps.ok()) return maps.status();
  if (absl::Status s = WriteAttentionFolder(output, *maps, config, model_flags.model); !s.ok()) return s;
  std::cerr << "wrote " << output << "/: attention.npy [" << layers->size() << ", " << heads->size()
            << ", " << prompt->size() << ", " << prompt->size() << "], tokens.json, index.html, "
            << layers->size() << " layer scripts and PNGs\n";
  return absl::OkStatus();
}

}  // namespace toyllm
