#include "tokenizer/byte_alphabet.h"

#include <array>

#include "tokenizer/utf8.h"

namespace toyllm {
namespace {

struct Alphabet {
  std::array<std::string, 256> text;  // byte -> UTF-8 of its character
  std::array<int, 512> byte;          // code point (all below 0x144) -> byte, or -1

  Alphabet() {
    byte.fill(-1);
    int shifted = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const uint32_t cp = printable ? b : 256 + shifted++;
      text[b] = EncodeUtf8(cp);
      byte[cp] = b;
    }
  }
};

const Alphabet& TheAlphabet() {
  static const Alphabet* alphabet = new Alphabet;
  return *alphabet;
}

}  // namespace

const std::string& ByteToAlphabet(uint8_t b) { return TheAlphabet().text[b]; }

void AppendAlphabetText(std::string_view bytes, std::string* out) {
  const Alphabet& a = TheAlphabet();
  for (unsigned char b : bytes) out->append(a.text[b]);
}

void AppendAlphabetBytes(std::string_view text, std::string* out) {
  const Alphabet& a = TheAlphabet();
  size_t i = 0;
  while (i < text.size()) {
    const size_t n = Utf8Length(text, i);
    const uint32_t cp = DecodeUtf8(text.substr(i, n));
    if (cp < a.byte.size() && a.byte[cp] >= 0) {
      out->push_back(static_cast<char>(a.byte[cp]));
    } else {
      out->append(text.substr(i, n));
    }
    i += n;
  }
}

}  // namespace toyllm
