// GGUF files of the llama, qwen2 and qwen3 architectures, as llama.cpp's converters and toyllm's writer
// produce them: llama.cpp's metadata keys and tensor names mapped onto ModelConfig and
// ModelWeights, and the tokenizer arrays rebuilt into a SentencePiece model.
#ifndef TOYLLM_MODELS_GGUF_READER_H_
#define TOYLLM_MODELS_GGUF_READER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "models/model_file.h"

namespace toyllm {

// Metadata key under which toyllm stores the exact SentencePiece model it converted with:
// llama.cpp's arrays cannot say whether the original collapses runs of spaces.
inline constexpr char kSentencePieceModelKey[] = "tokenizer.toyllm.sentencepiece_model";

// "rms" or "none": whether the blocks normalise their inputs. llama.cpp has no such key;
// toyllm writes it for models without norms, such as the article's example.
inline constexpr char kNormKey[] = "toyllm.norm";

// toyllm's record of a tokenizer.json pre-tokenizer that has no llama.cpp name: its regexes.
inline constexpr char kPreRegexesKey[] = "tokenizer.toyllm.pre_regexes";

absl::StatusOr<std::unique_ptr<ModelFile>> ReadGguf(std::unique_ptr<MappedFile> file);

// The tokenizer keys of a GGUF file (a model or a vocab-only file); an error when it has none.
absl::StatusOr<Vocabulary> ReadGgufVocabulary(const std::string& path);

}  // namespace toyllm

#endif  // TOYLLM_MODELS_GGUF_READER_H_
