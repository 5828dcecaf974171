#include "tokenizer/text_stream.h"

#include "tokenizer/utf8.h"

namespace toyllm {
namespace {

// SentencePiece decodes the bytes of an unfinished UTF-8 character to U+FFFD, byte-level
// BPE to the bytes themselves; the next piece may complete it, so neither is final yet.
size_t FinalLength(const std::string& text) {
  static const std::string kReplacement = "\xEF\xBF\xBD";
  size_t end = text.size() - IncompleteUtf8Tail(text);
  while (end >= kReplacement.size() &&
         text.compare(end - kReplacement.size(), kReplacement.size(), kReplacement) == 0) {
    end -= kReplacement.size();
  }
  return end;
}

}  // namespace

std::string TextStream::Push(const std::vector<int>& ids) {
  ids_.insert(ids_.end(), ids.begin(), ids.end());
  const std::string text = tokenizer_.Decode(ids_);
  const size_t end = FinalLength(text);
  if (end <= emitted_) return "";
  std::string fresh = text.substr(emitted_, end - emitted_);
  emitted_ = end;
  return fresh;
}

std::string TextStream::Finish() {
  const std::string text = tokenizer_.Decode(ids_);
  std::string rest = text.size() > emitted_ ? text.substr(emitted_) : "";
  emitted_ = text.size();
  return rest;
}

}  // namespace toyllm
