// Unicode normalisation of a tokenizer.json's normalizer section (Qwen's is NFC), by ICU.
#ifndef TOYLLM_TOKENIZER_NORMALIZER_H_
#define TOYLLM_TOKENIZER_NORMALIZER_H_

#include <string>
#include <string_view>

namespace toyllm {

// Whether `form` is one Normalize supports: "NFC", "NFKC", "NFD" or "NFKD".
bool IsNormalizationForm(const std::string& form);

// `text` in the normalisation form; bytes that are not UTF-8 pass through unchanged, so
// that no text is lost.
std::string Normalize(const std::string& form, std::string_view text);

}  // namespace toyllm

#endif  // TOYLLM_TOKENIZER_NORMALIZER_H_
