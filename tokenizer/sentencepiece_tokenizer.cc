// The only file that includes SentencePiece's header. Debian's copy declares
// `namespace absl { using std::string_view; }`, which collides with Abseil's own
// absl::string_view, so no Abseil header may be included here.
#include "tokenizer/sentencepiece_tokenizer.h"

#include <exception>

#include <sentencepiece_processor.h>

namespace toyllm {
namespace {

class SentencePieceTokenizer : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(std::unique_ptr<sentencepiece::SentencePieceProcessor> sp)
      : sp_(std::move(sp)) {
    v_.model = "llama";
    for (int id = 0; id < sp_->GetPieceSize(); ++id) {
      v_.tokens.push_back(sp_->IdToPiece(id));
      v_.scores.push_back(sp_->GetScore(id));
      v_.types.push_back(static_cast<int32_t>(Type(id)));
    }
    v_.bos_id = sp_->bos_id();
    v_.eos_id = sp_->eos_id();
    v_.unk_id = sp_->unk_id();
    v_.pad_id = sp_->pad_id();
    v_.add_bos = true;
    v_.sentencepiece_model = sp_->serialized_model_proto();
  }

  std::vector<int> Encode(std::string_view text, bool add_bos) const override {
    std::vector<int> ids;
    if (add_bos && sp_->bos_id() >= 0) ids.push_back(sp_->bos_id());
    std::vector<int> pieces;
    // Encoding only fails on an uninitialised processor, which this class never holds.
    sp_->Encode(text, &pieces).IgnoreError();
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    return ids;
  }

  std::string Decode(const std::vector<int>& ids) const override {
    std::string text;
    sp_->Decode(ids, &text).IgnoreError();  // fails only on ids out of range
    return text;
  }

  std::string Piece(int id) const override { return sp_->IdToPiece(id); }
  // SentencePiece's pieces read as they are: '▁' marks a word's start, <0x0A> a byte.
  std::string Readable(int id) const override { return sp_->IdToPiece(id); }
  float Score(int id) const override { return sp_->GetScore(id); }
  TokenType Type(int id) const override {
    // SentencePiece's processor cannot tell user-defined pieces from normal ones.
    if (sp_->IsUnknown(id)) return TokenType::kUnknown;
    if (sp_->IsControl(id)) return TokenType::kControl;
    if (sp_->IsByte(id)) return TokenType::kByte;
    if (sp_->IsUnused(id)) return TokenType::kUnused;
    return TokenType::kNormal;
  }
  const Vocabulary& vocabulary() const override { return v_; }
  bool IsEndOfGeneration(int id) const override { return id == sp_->eos_id(); }
  bool add_bos() const override { return true; }
  int vocab_size() const override { return sp_->GetPieceSize(); }
  int bos_id() const override { return sp_->bos_id(); }
  int eos_id() const override { return sp_->eos_id(); }
  int unk_id() const override { return sp_->unk_id(); }

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  Vocabulary v_;
};

}  // namespace

std::unique_ptr<Tokenizer> NewSentencePieceTokenizer(const std::string& serialized_model,
                                                     std::string* error) {
  auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
  // SentencePiece reports most bad models as a Status, but its trie builder (Darts) throws
  // on some pieces, e.g. one holding a NUL byte: a model file's bytes must not end the
  // process, so the exception stops here.
  sentencepiece::util::Status status;
  try {
    status = sp->LoadFromSerializedProto(serialized_model);
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
  if (!status.ok()) {
    *error = status.message();
    return nullptr;
  }
  if (sp->GetPieceSize() == 0) {
    *error = "the vocabulary is empty";
    return nullptr;
  }
  return std::make_unique<SentencePieceTokenizer>(std::move(sp));
}

}  // namespace toyllm
