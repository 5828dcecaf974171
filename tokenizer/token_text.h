// A token as text in a label (the attention page, explain, lens): its readable piece with
// SentencePiece's word-start mark '▁' shown as the space it stands for.
#ifndef TOYLLM_TOKENIZER_TOKEN_TEXT_H_
#define TOYLLM_TOKENIZER_TOKEN_TEXT_H_

#include <string>

#include "tokenizer/tokenizer.h"

namespace toyllm {

std::string TokenText(const Tokenizer& tokenizer, int id);

}  // namespace toyllm

#endif  // TOYLLM_TOKENIZER_TOKEN_TEXT_H_
