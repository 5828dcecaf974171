// Text to token ids and back. Deliberately free of Abseil types: the SentencePiece header
// that implements it cannot share a file with Abseil's headers (see sentencepiece_tokenizer.cc).
#ifndef TOYLLM_TOKENIZER_TOKENIZER_H_
#define TOYLLM_TOKENIZER_TOKENIZER_H_

#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocabulary.h"

namespace toyllm {

// A vocabulary entry's kind; the numbers are SentencePiece's and GGUF's token_type values.
enum class TokenType { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Token ids of `text`, with the beginning-of-sequence id first when add_bos is set.
  virtual std::vector<int> Encode(std::string_view text, bool add_bos) const = 0;

  // The text of a whole id sequence; control tokens (BOS, EOS) decode to nothing and
  // byte pieces such as <0x0A> to their bytes. Every id must be below vocab_size().
  virtual std::string Decode(const std::vector<int>& ids) const = 0;

  // The vocabulary entry of an id as stored, e.g. "▁time", "<0x0A>" or (byte-level) "Ġtime".
  virtual std::string Piece(int id) const = 0;

  // The entry as a person reads it: byte-level pieces as the text they stand for (" time",
  // not "Ġtime"), a piece that is part of a character as its bytes (<0xE5>); see ShowBytes.
  virtual std::string Readable(int id) const = 0;

  virtual float Score(int id) const = 0;  // the merge priority of a BPE piece
  virtual TokenType Type(int id) const = 0;

  // The description this tokenizer was built from, so that a model file can carry it exactly.
  virtual const Vocabulary& vocabulary() const = 0;

  // Whether generation ends at this id: EOS, EOT and the control tokens that close a turn
  // (<|im_end|>, <|eot_id|>, <|endoftext|>, ...).
  virtual bool IsEndOfGeneration(int id) const = 0;
  // Whether a prompt starts with BOS unless the user says otherwise (add_bos_token).
  virtual bool add_bos() const = 0;

  virtual int vocab_size() const = 0;
  virtual int bos_id() const = 0;  // -1 when the vocabulary has none
  virtual int eos_id() const = 0;  // -1 when the vocabulary has none
  virtual int unk_id() const = 0;  // -1 when the vocabulary has none
};

}  // namespace toyllm

#endif  // TOYLLM_TOKENIZER_TOKENIZER_H_
