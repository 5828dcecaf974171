// Rebuilding a SentencePiece model from the vocabulary arrays a GGUF file carries
// (tokenizer.ggml.tokens / scores / token_type), written as the protobuf wire format of
// sentencepiece_model.proto's ModelProto, which the SentencePiece library then loads.
#ifndef TOYLLM_TOKENIZER_SENTENCEPIECE_PROTO_H_
#define TOYLLM_TOKENIZER_SENTENCEPIECE_PROTO_H_

#include <cstdint>
#include <string>
#include <vector>

namespace toyllm {

struct VocabularyArrays {
  std::vector<std::string> pieces;  // '▁' (U+2581) stands for a space
  std::vector<float> scores;
  std::vector<int32_t> types;  // TokenType values
  int unk_id = 0;
  int bos_id = 1;
  int eos_id = 2;
  int pad_id = -1;
  // Llama's tokenizer prefixes the text with a space; GGUF records it as add_space_prefix.
  bool add_dummy_prefix = true;
  // Unknown characters become their UTF-8 byte pieces (<0x..>), which the vocabulary holds.
  bool byte_fallback = true;
};

// A BPE ModelProto with an identity normaliser that escapes spaces as '▁'.
// GGUF does not record whether the original collapsed runs of spaces; this one does not.
std::string BuildSentencePieceModel(const VocabularyArrays& vocabulary);

}  // namespace toyllm

#endif  // TOYLLM_TOKENIZER_SENTENCEPIECE_PROTO_H_
