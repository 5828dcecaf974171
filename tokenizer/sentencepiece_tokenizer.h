// The Tokenizer backed by the SentencePiece library.
#ifndef TOYLLM_TOKENIZER_SENTENCEPIECE_TOKENIZER_H_
#define TOYLLM_TOKENIZER_SENTENCEPIECE_TOKENIZER_H_

#include <memory>
#include <string>

#include "tokenizer/tokenizer.h"

namespace toyllm {

// Builds a tokenizer from the bytes of a SentencePiece ModelProto (a .model file).
// On failure returns nullptr and says why in *error.
std::unique_ptr<Tokenizer> NewSentencePieceTokenizer(const std::string& serialized_model,
                                                     std::string* error);

}  // namespace toyllm

#endif  // TOYLLM_TOKENIZER_SENTENCEPIECE_TOKENIZER_H_
