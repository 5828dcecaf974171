// Loading a tokenizer from a file, with errors that name the file.
#ifndef TOYLLM_TOKENIZER_LOAD_TOKENIZER_H_
#define TOYLLM_TOKENIZER_LOAD_TOKENIZER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tokenizer/tokenizer.h"

namespace toyllm {

// Loads a SentencePiece .model file.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadSentencePieceFile(const std::string& path);

// Loads a serialized SentencePiece model that came from `source` (named in errors), such
// as the vocabulary a GGUF file carries.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadSentencePieceModel(const std::string& model,
                                                                  const std::string& source);

}  // namespace toyllm

#endif  // TOYLLM_TOKENIZER_LOAD_TOKENIZER_H_
