#include "tokenizer/token_text.h"

#include "absl/strings/str_replace.h"

namespace toyllm {

std::string TokenText(const Tokenizer& tokenizer, int id) {
  return absl::StrReplaceAll(tokenizer.Readable(id), {{"\xE2\x96\x81", " "}});
}

}  // namespace toyllm
