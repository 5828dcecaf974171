// Streams generated text piece by piece while keeping it equal to the tokenizer's decoding
// of all ids: a piece's text can depend on its neighbours (a leading space is dropped at
// the start; byte pieces only form a character together).
#ifndef TOYLLM_TOKENIZER_TEXT_STREAM_H_
#define TOYLLM_TOKENIZER_TEXT_STREAM_H_

#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace toyllm {

class TextStream {
 public:
  explicit TextStream(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}

  // Adds ids and returns the text that became final with them.
  std::string Push(const std::vector<int>& ids);
  // Returns whatever is still held back (an incomplete character at the end).
  std::string Finish();

 private:
  const Tokenizer& tokenizer_;
  std::vector<int> ids_;
  size_t emitted_ = 0;  // bytes of the decoded text already returned
};

}  // namespace toyllm

#endif  // TOYLLM_TOKENIZER_TEXT_STREAM_H_
