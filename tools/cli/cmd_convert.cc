// toyllm convert: any model file toyllm reads, written as GGUF (llama.cpp's layout), or a
// model of a standard shape with random weights for benchmarks (--random).
#include <iostream>

#include "absl/strings/str_cat.h"
#include "models/benchmark_shapes.h"
#include "models/llama_gguf_export.h"
#include "models/quant_preset.h"
#include "models/random_llama.h"
#include "tools/cli/commands.h"
#include "tools/cli/model_setup.h"
#include "tools/cli/progress.h"

namespace toyllm {
namespace {

absl::Status WriteRandom(const std::string& output, const std::string& shape, uint64_t seed,
                         const std::string& name, ExportOptions options) {
  absl::StatusOr<ModelConfig> config = BenchmarkConfig(shape);
  if (!config.ok()) return absl::InvalidArgumentError(absl::StrCat("--random: ", config.status().message()));
  options.name = name.empty() ? absl::StrCat("random ", shape) : name;
  if (absl::Status s = WriteRandomLlamaGguf(output, *config, seed, options); !s.ok()) return s;
  std::cerr << "wrote " << output << " (random " << shape << ", " << QuantPresetName({options.type, options.mix})
            << ", seed " << seed << ")\n";
  return absl::OkStatus();
}

}  // namespace

absl::Status RunConvert(const std::vector<std::string>& argv) {
  ModelFlags model_flags;
  std::string output, type_name = "f32", name, random_shape;
  uint64_t seed = 1;
  std::vector<std::string> inputs;
  Args args("convert",
            "toyllm convert INPUT -o OUTPUT.gguf [flags]\n"
            "toyllm convert --random 15M|110M|1.1B|llama3.2-1b|qwen2.5-0.5b -o OUTPUT.gguf [--type T] [--seed N]\n"
            "Writes a model as GGUF with llama.cpp's keys and tensor names, its tokenizer inside.\n"
            "INPUT: a GGUF file (its chat template kept), a llama2.c checkpoint (legacy, version 1\n"
            "or 2), a PyTorch checkpoint, or a Hugging Face model directory.\n"
            "--random writes random weights (no tokenizer) at a standard shape, for `toyllm bench`.",
            {{"-o", "--output", "the GGUF file to write", &output},
             {"", "--type",
              "f32, f16, bf16, or a llama-quantize preset (q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q3_k_s|m|l, "
              "q4_k_s|m, q5_k_s|m, q6_k) with its per-tensor types; norms stay f32 (default f32)",
              &type_name},
             {"", "--tokenizer", "SentencePiece .model to embed (default: the input's own, or one beside it)",
              &model_flags.tokenizer},
             {"", "--name", "general.name (default: the input's file name)", &name},
             {"", "--random", "a random-weight model of this shape instead of INPUT: 15M, 110M, 1.1B, llama3.2-1b or qwen2.5-0.5b",
              &random_shape},
             {"", "--seed", "seed of the random weights; the same seed writes the same file (default 1)",
              &seed}},
            &inputs);
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  const bool random = args.given("--random");
  if (random && !inputs.empty()) return absl::InvalidArgumentError("give either INPUT or --random, not both");
  if (!random && inputs.size() != 1) return absl::InvalidArgumentError("give exactly one INPUT model");
  if (!random && args.given("--seed")) return absl::InvalidArgumentError("--seed needs --random");
  if (random && args.given("--tokenizer")) {
    return absl::InvalidArgumentError("--random models have no tokenizer; --tokenizer does not apply");
  }
  if (output.empty()) return absl::InvalidArgumentError("no output file given (-o FILE.gguf)");
  absl::StatusOr<QuantPreset> preset = ParseQuantPreset(type_name);
  if (!preset.ok()) return preset.status();
  ExportOptions options;
  options.type = preset->base;
  options.mix = preset->mix;
  options.progress = [](size_t done, size_t total) { ShowProgress("writing tensors", done, total); };
  if (random) return WriteRandom(output, random_shape, seed, name, options);

  model_flags.model = inputs[0];
  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(model_flags.model);
  if (!model.ok()) return model.status();
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadTokenizerFor(model_flags, **model);
  if (!tokenizer.ok()) return tokenizer.status();

  options.name = name.empty() ? model_flags.model.substr(model_flags.model.rfind('/') + 1) : name;
  options.tokenizer = tokenizer->get();
  options.chat_template = (*model)->chat_template;
  if (absl::Status s = WriteLlamaGguf(output, (*model)->config, (*model)->weights, options); !s.ok()) {
    return s;
  }
  std::cerr << "wrote " << output << " (" << QuantPresetName(*preset) << ")\n";
  return absl::OkStatus();
}

}  // namespace toyllm
