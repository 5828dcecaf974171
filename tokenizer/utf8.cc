#include "tokenizer/utf8.h"

namespace toyllm {
namespace {

// The sequence length a lead byte announces, 0 for a continuation or invalid byte.
size_t LeadLength(unsigned char b) {
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return 2;
  if (b >= 0xE0 && b <= 0xEF) return 3;
  if (b >= 0xF0 && b <= 0xF4) return 4;
  return 0;
}

bool IsContinuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// Whether the second byte is allowed after this lead byte (no overlong forms, surrogates or
// code points above U+10FFFF).
bool SecondByteOk(unsigned char lead, unsigned char second) {
  if (lead == 0xE0) return second >= 0xA0;
  if (lead == 0xED) return second <= 0x9F;
  if (lead == 0xF0) return second >= 0x90;
  if (lead == 0xF4) return second <= 0x8F;
  return true;
}

}  // namespace

size_t Utf8Length(std::string_view text, size_t i) {
  const unsigned char lead = text[i];
  const size_t n = LeadLength(lead);
  if (n <= 1) return 1;
  if (i + n > text.size()) return 1;
  for (size_t k = 1; k < n; ++k) {
    const unsigned char c = text[i + k];
    if (!IsContinuation(c) || (k == 1 && !SecondByteOk(lead, c))) return 1;
  }
  return n;
}

uint32_t DecodeUtf8(std::string_view s) {
  const unsigned char lead = s[0];
  if (s.size() == 1) return lead < 0x80 ? lead : lead + 0x110000;
  uint32_t cp = lead & (0x7F >> s.size());
  for (size_t k = 1; k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[k]) & 0x3F);
  return cp;
}

std::string EncodeUtf8(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return out;
}

size_t IncompleteUtf8Tail(std::string_view text) {
  // A sequence is at most 4 bytes: look back for its lead byte.
  for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    const unsigned char c = text[text.size() - back];
    if (IsContinuation(c)) continue;
    const size_t n = LeadLength(c);
    return n > back ? back : 0;
  }
  return 0;
}

std::string ShowBytes(std::string_view bytes) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  size_t i = 0;
  while (i < bytes.size()) {
    const size_t n = Utf8Length(bytes, i);
    const unsigned char b = bytes[i];
    if (b == '\n') {
      out += "\\n";
    } else if (b == '\t') {
      out += "\\t";
    } else if (b == '\r') {
      out += "\\r";
    } else if ((n == 1 && b >= 0x80) || b < 0x20 || b == 0x7F) {
      out += "<0x";
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 15]);
      out += ">";
    } else {
      out.append(bytes.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace toyllm
