// Byte-level BPE encoding of arbitrary bytes: a small real-shaped vocabulary (every byte,
// some merges, special and user-defined tokens) with the pre-tokenizer the first byte
// chooses. Decoding must give back exactly the bytes: any text, valid UTF-8 or not.
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_targets.h"
#include "tokenizer/byte_alphabet.h"
#include "tokenizer/load_tokenizer.h"

namespace toyllm::fuzz {
namespace {

const Tokenizer* TheTokenizer(int which) {
  static const std::vector<std::unique_ptr<Tokenizer>>* tokenizers = [] {
    auto* all = new std::vector<std::unique_ptr<Tokenizer>>;
    for (const char* pre : {"llama-bpe", "qwen2", "gpt-2", "deepseek-llm", "deepseek-coder", "falcon",
                            "starcoder", "bloom"}) {
      Vocabulary v;
      v.model = "gpt2";
      v.pre = pre;
      for (int b = 0; b < 256; ++b) v.tokens.push_back(ByteToAlphabet(static_cast<uint8_t>(b)));
      const std::string space = ByteToAlphabet(' ');
      for (const char* merge : {"t h", "th e", "a n", "i n", "e r"}) v.merges.push_back(merge);
      v.merges.push_back(space + " t");
      for (const char* piece : {"th", "the", "an", "in", "er"}) v.tokens.push_back(piece);
      v.tokens.push_back(space + "t");
      v.types.assign(v.tokens.size(), 1);
      for (auto [text, type] : {std::pair{"<|endoftext|>", 3}, std::pair{"<|im_end|>", 3}, std::pair{"<think>", 4}}) {
        v.tokens.push_back(text);
        v.types.push_back(type);
      }
      v.eos_id = static_cast<int>(v.tokens.size()) - 2;
      v.ignore_merges = v.pre == "llama-bpe";
      absl::StatusOr<std::unique_ptr<Tokenizer>> t = LoadTokenizer(v, "the fuzz vocabulary");
      if (!t.ok()) abort();  // the vocabulary above is valid
      all->push_back(*std::move(t));
    }
    return all;
  }();
  return (*tokenizers)[which % tokenizers->size()].get();
}

}  // namespace

void BpeEncodeInput(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const Tokenizer& t = *TheTokenizer(data[0]);
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::vector<int> ids = t.Encode(text, false);
  std::string decoded;
  for (int id : ids) {
    if (id < 0 || id >= t.vocab_size()) abort();
    t.Readable(id);
  }
  // Control tokens decode to nothing, so only a text without them must come back whole.
  if (text.find("<|") == std::string::npos && t.Decode(ids) != text) abort();
}

}  // namespace toyllm::fuzz
