// Cutting a text into the words that byte-level BPE merges within, with the model's
// regular expressions (PCRE2, which has the Unicode categories \p{L}, \p{N} and the
// lookahead \s+(?!\S) these need). Each regex in turn splits every piece the previous
// ones left: its matches and the text between them both become pieces, as llama.cpp's
// unicode_regex_split and tokenizer.json's Split(behavior: Isolated) do.
#ifndef TOYLLM_TOKENIZER_PRE_TOKENIZER_H_
#define TOYLLM_TOKENIZER_PRE_TOKENIZER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace toyllm {

// The regexes llama.cpp applies for a tokenizer.ggml.pre name, or nullptr.
const std::vector<std::string>* PreTokenizerRegexes(const std::string& name);

// The names PreTokenizerRegexes knows, comma-separated, for error messages.
std::string KnownPreTokenizers();

// The name whose regexes are exactly `regexes`, or "" (for writing tokenizer.ggml.pre).
std::string PreTokenizerName(const std::vector<std::string>& regexes);

class PreTokenizer {
 public:
  // Fails naming the regex PCRE2 rejects and why.
  static absl::StatusOr<std::unique_ptr<PreTokenizer>> Create(const std::vector<std::string>& regexes);
  ~PreTokenizer();

  // The pieces of `text`, in order; together they are exactly `text`. Bytes that are not
  // UTF-8 match no category and so end up between the matches, never lost.
  std::vector<std::string_view> Split(std::string_view text) const;

 private:
  struct Compiled;
  PreTokenizer() = default;
  std::vector<std::unique_ptr<Compiled>> regexes_;
};

}  // namespace toyllm

#endif  // TOYLLM_TOKENIZER_PRE_TOKENIZER_H_
