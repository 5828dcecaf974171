#include "tokenizer/sentencepiece_proto.h"

#include <cstring>

#include "tokenizer/tokenizer.h"

namespace toyllm {
namespace {

// Field numbers from sentencepiece_model.proto.
enum ModelField { kPieces = 1, kTrainerSpec = 2, kNormalizerSpec = 3 };
enum PieceField { kPiece = 1, kScore = 2, kType = 3 };
enum TrainerField {
  kModelType = 3, kByteFallback = 35, kUnkId = 40, kBosId = 41, kEosId = 42, kPadId = 43
};
enum NormalizerField {
  kName = 1, kAddDummyPrefix = 3, kRemoveExtraWhitespaces = 4, kEscapeWhitespaces = 5
};
constexpr int kBpe = 2;  // TrainerSpec.ModelType.BPE

// Protobuf wire format: a key is (field << 3 | wire type); 0 varint, 2 length-delimited, 5 fixed32.
void Varint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void IntField(int field, int64_t value, std::string* out) {
  Varint(static_cast<uint64_t>(field) << 3, out);
  Varint(static_cast<uint64_t>(value), out);  // negative int32 is sign-extended to 10 bytes
}

void BytesField(int field, const std::string& bytes, std::string* out) {
  Varint(static_cast<uint64_t>(field) << 3 | 2, out);
  Varint(bytes.size(), out);
  out->append(bytes);
}

void FloatField(int field, float value, std::string* out) {
  Varint(static_cast<uint64_t>(field) << 3 | 5, out);
  char bytes[4];
  std::memcpy(bytes, &value, 4);
  out->append(bytes, 4);
}

}  // namespace

std::string BuildSentencePieceModel(const VocabularyArrays& v) {
  std::string model;
  for (size_t i = 0; i < v.pieces.size(); ++i) {
    std::string piece;
    BytesField(kPiece, v.pieces[i], &piece);
    FloatField(kScore, i < v.scores.size() ? v.scores[i] : 0.0f, &piece);
    int type = i < v.types.size() ? v.types[i] : 1;
    // SentencePiece wants exactly one unknown piece, the unk id's; Phi-3's GGUF marks its
    // <unk> as a control token and its padding entries as unknown. Padding never comes out
    // of encoding, as unused pieces do not either.
    if (static_cast<int>(i) == v.unk_id) {
      type = static_cast<int>(TokenType::kUnknown);
    } else if (type == static_cast<int>(TokenType::kUnknown)) {
      type = static_cast<int>(TokenType::kUnused);
    }
    IntField(kType, type, &piece);
    BytesField(kPieces, piece, &model);
  }
  std::string trainer;
  IntField(kModelType, kBpe, &trainer);
  IntField(kByteFallback, v.byte_fallback, &trainer);
  IntField(kUnkId, v.unk_id, &trainer);
  IntField(kBosId, v.bos_id, &trainer);
  IntField(kEosId, v.eos_id, &trainer);
  IntField(kPadId, v.pad_id, &trainer);
  BytesField(kTrainerSpec, trainer, &model);
  std::string normalizer;
  BytesField(kName, "identity", &normalizer);
  IntField(kAddDummyPrefix, v.add_dummy_prefix, &normalizer);
  IntField(kRemoveExtraWhitespaces, 0, &normalizer);
  IntField(kEscapeWhitespaces, 1, &normalizer);
  BytesField(kNormalizerSpec, normalizer, &model);
  return model;
}

}  // namespace toyllm
