#include "tokenizer/normalizer.h"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include "tokenizer/utf8.h"

namespace toyllm {
namespace {

const icu::Normalizer2* Instance(const std::string& form) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = nullptr;
  if (form == "NFC") n = icu::Normalizer2::getNFCInstance(status);
  if (form == "NFKC") n = icu::Normalizer2::getNFKCInstance(status);
  if (form == "NFD") n = icu::Normalizer2::getNFDInstance(status);
  if (form == "NFKD") n = icu::Normalizer2::getNFKDInstance(status);
  return U_SUCCESS(status) ? n : nullptr;
}

std::string NormalizeValid(const icu::Normalizer2& n, std::string_view text) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::UnicodeString in = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), text.size()));
  const icu::UnicodeString out = n.normalize(in, status);
  if (U_FAILURE(status)) return std::string(text);
  std::string bytes;
  out.toUTF8String(bytes);
  return bytes;
}

}  // namespace

bool IsNormalizationForm(const std::string& form) { return Instance(form) != nullptr; }

std::string Normalize(const std::string& form, std::string_view text) {
  const icu::Normalizer2* n = Instance(form);
  if (n == nullptr) return std::string(text);
  // ICU would turn invalid bytes into U+FFFD: normalise the valid runs only.
  std::string out;
  size_t run = 0, i = 0;
  while (i < text.size()) {
    const size_t len = Utf8Length(text, i);
    const bool invalid = len == 1 && static_cast<unsigned char>(text[i]) >= 0x80;
    if (invalid) {
      out += NormalizeValid(*n, text.substr(run, i - run));
      out.push_back(text[i]);
      run = i + 1;
    }
    i += len;
  }
  out += NormalizeValid(*n, text.substr(run));
  return out;
}

}  // namespace toyllm
