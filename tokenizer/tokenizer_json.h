// Hugging Face's tokenizer.json (the `tokenizers` library's file) as a Vocabulary: model BPE
// with ByteLevel (vocab, merges as "a b" or ["a", "b"], ignore_merges), added_tokens, the
// normalizer (NFC, NFKC, NFD, NFKD) and the pre_tokenizer (Split, ByteLevel, Digits and
// Sequences of them). tokenizer_config.json beside it gives add_bos_token, bos and eos.
// Anything else is refused with one line naming it: this project does not guess.
#ifndef TOYLLM_TOKENIZER_TOKENIZER_JSON_H_
#define TOYLLM_TOKENIZER_TOKENIZER_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "tokenizer/vocabulary.h"

namespace toyllm {

// Reads `path` and, when present, tokenizer_config.json in the same directory.
absl::StatusOr<Vocabulary> ReadTokenizerJson(const std::string& path);

// The same from the files' contents (config may be empty); errors name `source`.
absl::StatusOr<Vocabulary> ParseTokenizerJson(const std::string& json, const std::string& config,
                                              const std::string& source);

// Appends unused "[PAD<id>]" entries up to n tokens, as llama.cpp's converter fills a
// model's embedding rows beyond its tokenizer (Qwen: 151,669 tokens, 151,936 rows).
void PadVocabulary(int n, Vocabulary& v);

}  // namespace toyllm

#endif  // TOYLLM_TOKENIZER_TOKENIZER_JSON_H_
