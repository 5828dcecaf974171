// Byte-level BPE, GPT-2's scheme, as Llama 3, Qwen, DeepSeek, StarCoder and GPT-2 use it:
// special tokens written in the text become their ids; the rest is normalised (if the
// vocabulary says so), cut into words by the pre-tokenizer's regexes, each word's bytes
// become characters of GPT-2's byte alphabet, and adjacent pieces merge, lowest merge rank
// first, until no listed merge applies. Decoding maps the pieces' characters back to bytes,
// so decode(encode(x)) == x for every text.
#ifndef TOYLLM_TOKENIZER_BPE_TOKENIZER_H_
#define TOYLLM_TOKENIZER_BPE_TOKENIZER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocabulary.h"

namespace toyllm {

// Checks the vocabulary (merges name tokens, ids in range, a known pre-tokenizer, regexes
// PCRE2 accepts); errors say what is wrong, without the file's name.
absl::StatusOr<std::unique_ptr<Tokenizer>> NewBpeTokenizer(Vocabulary vocabulary);

}  // namespace toyllm

#endif  // TOYLLM_TOKENIZER_BPE_TOKENIZER_H_
