// The few UTF-8 facts the tokenizers need, tolerant of invalid input: a byte that starts
// no valid sequence counts as a one-byte character of its own.
#ifndef TOYLLM_TOKENIZER_UTF8_H_
#define TOYLLM_TOKENIZER_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace toyllm {

// The length of the valid UTF-8 sequence at text[i], or 1 when none starts there.
size_t Utf8Length(std::string_view text, size_t i);

// The code point of one sequence as Utf8Length delimits it (a lone byte: its value + 0x110000).
uint32_t DecodeUtf8(std::string_view sequence);

std::string EncodeUtf8(uint32_t cp);

// How many bytes at the end of `text` begin a UTF-8 sequence that is still incomplete.
size_t IncompleteUtf8Tail(std::string_view text);

// Bytes as a person reads them: valid characters as themselves, newline, tab and carriage
// return as \n, \t, \r, and any other control byte or byte of an incomplete or invalid
// sequence as <0xE4>.
std::string ShowBytes(std::string_view bytes);

}  // namespace toyllm

#endif  // TOYLLM_TOKENIZER_UTF8_H_
