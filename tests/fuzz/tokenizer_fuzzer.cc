// The SentencePiece loader (tokenizer/load_tokenizer.h) on arbitrary bytes, as a GGUF
// file's embedded model or a tokenizer.model beside a checkpoint reaches it; whatever
// loads is then used the way the command line uses it.
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_targets.h"
#include "tokenizer/load_tokenizer.h"

namespace toyllm::fuzz {

void TokenizerInput(const uint8_t* data, size_t size) {
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer =
      LoadSentencePieceModel(std::string(reinterpret_cast<const char*>(data), size), "the input");
  if (!tokenizer.ok()) return;
  const Tokenizer& t = **tokenizer;
  // ASCII, CJK, control characters and a byte that is no UTF-8.
  const std::vector<int> ids = t.Encode("Once upon a time, \xe5\xae\x83\xe5\xa4\xaa\xe7\xb4\xaf\n\t \xff", true);
  t.Decode(ids);
  // What `toyllm tokenize` and the GGUF export read of every vocabulary entry.
  for (int id = 0; id < t.vocab_size() && id < 4096; ++id) {
    t.Piece(id);
    t.Score(id);
    t.Type(id);
  }
  t.vocabulary();
  for (int id : ids) t.Readable(id);
}

}  // namespace toyllm::fuzz
