// Writes a model of the Llama family as GGUF with llama.cpp's metadata keys, tensor names
// and tokenizer arrays, so that llama.cpp loads the file and toyllm reads it back.
#ifndef TOYLLM_MODELS_LLAMA_GGUF_EXPORT_H_
#define TOYLLM_MODELS_LLAMA_GGUF_EXPORT_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/ggml_type.h"
#include "models/gguf_writer.h"
#include "models/quant_preset.h"
#include "runtime/model_config.h"
#include "runtime/weights.h"
#include "tokenizer/tokenizer.h"

namespace toyllm {

struct ExportOptions {
  // The matrices' type, or llama-quantize's preset of that base type with `mix`, per-tensor
  // choices included (models/quant_preset.h); norms always stay f32.
  GgmlType type = GgmlType::kF32;
  QuantMix mix = QuantMix::kNone;
  std::string name;                // general.name
  const Tokenizer* tokenizer = nullptr;  // written into the file when given
  std::string chat_template;             // tokenizer.chat_template, when not empty
  GgufWriter::Progress progress;
  // When set, gives each tensor's n float32 values (by llama.cpp's name) at the moment the
  // writer encodes it, instead of the weights' views, which then only give the shapes: a
  // generated model is written one tensor at a time, never whole in memory. The values
  // must stay valid until the next call.
  std::function<const float*(const std::string& name, int64_t n)> values;
};

// The tokenizer as llama.cpp's tokenizer.ggml.* keys: SentencePiece ("llama") with its
// scores and, under kSentencePieceModelKey, the exact ModelProto; byte-level BPE ("gpt2")
// with its merges and the pre-tokenizer's name (or, without one, kPreRegexesKey).
void AddTokenizerKeys(const Tokenizer& tokenizer, GgufWriter& w);

// The general.architecture a config is written as: "qwen3" with q/k norms, "qwen2" with
// half-split RoPE and q/k/v biases, "llama" with interleaved (or no) RoPE; an error for a
// combination llama.cpp has no architecture for.
absl::StatusOr<std::string> GgufArchitecture(const ModelConfig& config);

// The architecture is GgufArchitecture(config), its keys prefixed with it.
absl::Status WriteLlamaGguf(const std::string& path, const ModelConfig& config,
                            const ModelWeights& weights, const ExportOptions& options);

}  // namespace toyllm

#endif  // TOYLLM_MODELS_LLAMA_GGUF_EXPORT_H_
