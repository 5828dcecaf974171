// Loading a tokenizer from a file, with errors that name the file.
#ifndef TOYLLM_TOKENIZER_LOAD_TOKENIZER_H_
#define TOYLLM_TOKENIZER_LOAD_TOKENIZER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocabulary.h"

namespace toyllm {

// Loads a SentencePiece .model file.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadSentencePieceFile(const std::string& path);

// Loads a serialized SentencePiece model that came from `source` (named in errors), such
// as the vocabulary a GGUF file carries.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadSentencePieceModel(const std::string& model,
                                                                  const std::string& source);

// The tokenizer a vocabulary describes (SentencePiece for "llama", byte-level BPE for
// "gpt2"); errors name `source`.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const Vocabulary& vocabulary,
                                                         const std::string& source);

// A SentencePiece .model or a Hugging Face tokenizer.json (by its name's ending).
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizerFile(const std::string& path);

// The whole of a file, for the tokenizer files; errors name it.
absl::StatusOr<std::string> ReadTokenizerFile(const std::string& path);

}  // namespace toyllm

#endif  // TOYLLM_TOKENIZER_LOAD_TOKENIZER_H_
