// toyllm generate: continue a prompt and stream the text as it is produced.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <numeric>

#include "absl/strings/str_format.h"
#include "tools/page/attention_output.h"
#include "tools/cli/ablation_flags.h"
#include "tools/cli/commands.h"
#include "tools/cli/generate_text.h"
#include "tools/cli/model_setup.h"
#include "tokenizer/text_stream.h"

namespace toyllm {
namespace {

// A seed from the clock when none is given; xorshift needs a non-zero state.
uint64_t ClockSeed() {
  const uint64_t t = std::chrono::system_clock::now().time_since_epoch().count();
  return t == 0 ? 1 : t;
}

void Write(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

absl::Status RunGenerate(const std::vector<std::string>& argv) {
  ModelFlags model_flags;
  SamplerOptions sampling;
  int n_predict = 256;
  std::string dump_attention;
  AblationFlags ablation_flags;
  std::vector<Flag> flags = CommonFlags(model_flags, /*with_context=*/true);
  AddAblationFlags(ablation_flags, flags);
  flags.insert(flags.end(), {
      {"-n", "--n-predict", "tokens to generate after the prompt (default 256; -1: until the context ends)", &n_predict},
      {"", "--temp", "temperature; 0 is greedy (default 1.0)", &sampling.temperature},
      {"", "--top-k", "keep the k most likely tokens; 0 keeps all (default 0)", &sampling.top_k},
      {"", "--top-p", "nucleus sampling threshold in (0, 1]; 1 disables it (default 0.9)", &sampling.top_p},
      {"", "--seed", "random seed, > 0 (default: from the clock)", &sampling.seed},
      {"", "--dump-attention", "also write every layer's and head's attention over the whole text "
                               "into this folder (as toyllm attention does)", &dump_attention},
  });
  Args args("generate",
            "Continues the prompt with the model, streaming text to stdout and speed to stderr.\n"
            "Sampling follows llama2.c run.c: the same seed, --temp and --top-p give the same text.",
            flags);
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  if (!args.given("--seed")) sampling.seed = ClockSeed();
  if (absl::Status s = ValidateSamplerOptions(sampling); !s.ok()) return s;
  if (n_predict < -1) {
    return absl::InvalidArgumentError(absl::StrCat("--n-predict: ", n_predict, " must be >= -1"));
  }
  if (!dump_attention.empty()) {
    if (absl::Status s = CheckFolderCreatable(dump_attention); !s.ok()) return s;
  }

  absl::StatusOr<LoadedModel> model = LoadForInference(model_flags);
  if (!model.ok()) return model.status();
  absl::StatusOr<std::vector<int>> prompt = EncodePrompt(*model, model_flags.prompt);
  if (!prompt.ok()) return prompt.status();
  absl::StatusOr<std::unique_ptr<HeadAblation>> ablation = AttachAblation(ablation_flags, *model, *prompt);
  if (!ablation.ok()) return ablation.status();

  GenerateOptions options;
  options.n_predict = n_predict;
  options.stop_tokens = StopTokens(*model->tokenizer);
  if (sampling.temperature > 0) std::cerr << "seed: " << sampling.seed << "\n";

  const ModelConfig& config = model->file->config;
  std::vector<int> all_layers(config.n_layers), all_heads(config.n_heads);
  std::iota(all_layers.begin(), all_layers.end(), 0);
  std::iota(all_heads.begin(), all_heads.end(), 0);
  TapRecorder recorder(AttentionTaps(all_layers));
  if (!dump_attention.empty()) model->transformer->set_observer(&recorder);

  // The prompt is echoed as typed: decoding its ids could differ (a character outside the
  // vocabulary decodes to " ⁇ "); only the continuation comes from the ids.
  TextStream stream(*model->tokenizer);
  stream.Push(*prompt);
  Write(model_flags.prompt);
  Sampler sampler(sampling);
  std::vector<int> ids = *prompt;
  absl::StatusOr<GenerateStats> stats =
      Generate(*model->transformer, sampler, *prompt, options, [&stream, &ids](int id) {
        ids.push_back(id);
        Write(stream.Push({id}));
      });
  Write(stream.Finish() + "\n");
  if (!stats.ok()) return stats.status();

  if (!dump_attention.empty()) {
    // Generation never feeds back its last token; one more step gives that token's row
    // too, when the context has room for it.
    if (ids.size() > prompt->size()) {
      const int pos = static_cast<int>(ids.size()) - 1;
      if (pos < model->transformer->context_length()) {
        absl::StatusOr<absl::Span<const float>> last = model->transformer->Forward({ids.back()}, pos);
        if (!last.ok()) return last.status();
      } else {
        ids.pop_back();
      }
    }
    absl::StatusOr<AttentionMaps> maps = AssembleMaps(recorder, all_layers, all_heads, ids, *model->tokenizer);
    if (!maps.ok()) return maps.status();
    if (absl::Status s = WriteAttentionFolder(dump_attention, *maps, config, model_flags.model); !s.ok()) return s;
  }

  std::cerr << absl::StrFormat(
      "prompt tokens: %d, prefill: %.1f tok/s, decode: %.1f tok/s (%d tokens)\n",
      stats->prompt_tokens, stats->prompt_tokens / std::max(stats->prefill_seconds, 1e-9),
      stats->generated_tokens / std::max(stats->decode_seconds, 1e-9), stats->generated_tokens);
  return absl::OkStatus();
}

}  // namespace toyllm
