// GPT-2's byte alphabet: each of the 256 byte values as one printable Unicode character, so
// that a byte-level vocabulary is a list of ordinary strings. Printable Latin-1 bytes stand
// for themselves; the others (controls, space, ...) are shifted to U+0100 and up in order,
// so a space is "Ġ" (U+0120) and a newline "Ċ" (U+010A).
#ifndef TOYLLM_TOKENIZER_BYTE_ALPHABET_H_
#define TOYLLM_TOKENIZER_BYTE_ALPHABET_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace toyllm {

// The UTF-8 of byte b's character.
const std::string& ByteToAlphabet(uint8_t b);

// Bytes to their characters, appended to *out.
void AppendAlphabetText(std::string_view bytes, std::string* out);

// The bytes a string of alphabet characters stands for, appended to *out; a character
// outside the alphabet is kept as its own UTF-8 (as an added token's text is).
void AppendAlphabetBytes(std::string_view text, std::string* out);

}  // namespace toyllm

#endif  // TOYLLM_TOKENIZER_BYTE_ALPHABET_H_
