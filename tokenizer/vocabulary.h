// What a model file says about its tokenizer, in GGUF's terms (llama.cpp's tokenizer.ggml.*
// keys), whichever file it came from: a GGUF file, a Hugging Face tokenizer.json or a
// SentencePiece .model. It is the seam between the readers (models/, tokenizer.json) and
// the tokenizers built from it (LoadTokenizer), and what a GGUF writer writes back.
#ifndef TOYLLM_TOKENIZER_VOCABULARY_H_
#define TOYLLM_TOKENIZER_VOCABULARY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace toyllm {

struct Vocabulary {
  // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (byte-level BPE); empty when
  // the file carries no tokenizer.
  std::string model;
  std::vector<std::string> tokens;  // gpt2: in GPT-2's byte alphabet ("Ġ" is a space)
  std::vector<float> scores;        // SentencePiece's merge scores; may be empty
  std::vector<int32_t> types;       // TokenType values; empty means all normal
  std::vector<std::string> merges;  // gpt2: "left right", lowest rank first

  // gpt2: how the text is cut into words before merging. A llama.cpp name
  // (tokenizer.ggml.pre, see KnownPreTokenizers) or, from a tokenizer.json whose regexes
  // have no name, the regexes themselves, applied in turn.
  std::string pre;
  std::vector<std::string> pre_regexes;
  bool add_prefix_space = false;  // ByteLevel's add_prefix_space: " " before the text
  bool ignore_merges = false;     // a word that is a token is taken whole (Llama 3)
  std::string normalizer;         // "", "NFC", "NFKC", "NFD" or "NFKD"

  int bos_id = -1, eos_id = -1, eot_id = -1, unk_id = -1, pad_id = -1;
  bool add_bos = false;  // tokenizer.ggml.add_bos_token

  // "llama": the exact SentencePiece ModelProto the tokenizer runs, which a GGUF file
  // records under tokenizer.toyllm.sentencepiece_model or which is rebuilt from the arrays.
  std::string sentencepiece_model;

  bool empty() const { return model.empty(); }
};

// The description of a SentencePiece ModelProto's bytes, for LoadTokenizer.
inline Vocabulary SentencePieceVocabulary(std::string model_proto) {
  Vocabulary v;
  v.model = "llama";
  v.sentencepiece_model = std::move(model_proto);
  return v;
}

}  // namespace toyllm

#endif  // TOYLLM_TOKENIZER_VOCABULARY_H_
