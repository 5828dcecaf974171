// The SentencePiece tokenizer on the real stories260K and Llama 2 vocabularies. Expected ids
// come from the reference Python binding (python3-sentencepiece), computed once by hand.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_env.h"
#include "tokenizer/load_tokenizer.h"
#include "tokenizer/text_stream.h"

namespace toyllm {
namespace {

using ::toyllm::testing::ModelPath;

std::unique_ptr<Tokenizer> Load(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadSentencePieceFile(path);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return tokenizer.ok() ? *std::move(tokenizer) : nullptr;
}

TEST(Tokenizer, Tok512MatchesReferenceIds) {
  const std::string path = testing::Tok512();
  TOYLLM_REQUIRE_FILE(path);
  std::unique_ptr<Tokenizer> tok = Load(path);
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->vocab_size(), 512);
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  EXPECT_EQ(tok->Encode("Once upon a time", /*add_bos=*/true),
            (std::vector<int>{1, 403, 407, 261, 378}));
  EXPECT_EQ(tok->Encode("Once upon a time", /*add_bos=*/false),
            (std::vector<int>{403, 407, 261, 378}));
  // Characters outside the 512 pieces fall back to their UTF-8 bytes.
  EXPECT_EQ(tok->Encode("这个动物", false),
            (std::vector<int>{410, 235, 194, 156, 231, 187, 173, 232, 141, 171, 234, 140, 172}));
  EXPECT_EQ(tok->Encode("", true), (std::vector<int>{1}));
}

TEST(Tokenizer, Llama2MatchesReferenceIds) {
  const std::string path = ModelPath("llama2-tokenizer/tokenizer.model");
  TOYLLM_REQUIRE_FILE(path);
  std::unique_ptr<Tokenizer> tok = Load(path);
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->vocab_size(), 32000);
  EXPECT_EQ(tok->Encode("Once upon a time", true), (std::vector<int>{1, 9038, 2501, 263, 931}));
}

TEST(Tokenizer, RoundTripsText) {
  const std::string path = testing::Tok512();
  TOYLLM_REQUIRE_FILE(path);
  std::unique_ptr<Tokenizer> tok = Load(path);
  ASSERT_NE(tok, nullptr);
  for (const std::string text :
       {"Once upon a time", "Hello, world!\nLily said: \"I'm 3 years old.\"",
        "这个动物并没有过马路，因为它太累了", "tabs\tand émojis 🐱 too", "x"}) {
    EXPECT_EQ(tok->Decode(tok->Encode(text, /*add_bos=*/true)), text);
  }
}

TEST(Tokenizer, BytePiecesDecodeToTheirBytes) {
  const std::string path = testing::Tok512();
  TOYLLM_REQUIRE_FILE(path);
  std::unique_ptr<Tokenizer> tok = Load(path);
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->Piece(13), "<0x0A>");
  EXPECT_EQ(tok->Decode({13}), "\n");
  EXPECT_EQ(tok->Piece(1), "<s>");
  EXPECT_EQ(tok->Decode({1, 403, 2}), "Once");  // control tokens decode to nothing
}

// Streaming one id at a time gives exactly the decoding of the whole sequence, even when
// a character is split over several byte pieces.
TEST(TextStream, ConcatenationEqualsWholeDecoding) {
  const std::string path = testing::Tok512();
  TOYLLM_REQUIRE_FILE(path);
  std::unique_ptr<Tokenizer> tok = Load(path);
  ASSERT_NE(tok, nullptr);
  const std::string text = "Lily saw 动物 and said \"它太累了\".\nThe end.";
  const std::vector<int> ids = tok->Encode(text, true);
  TextStream stream(*tok);
  std::string streamed;
  for (int id : ids) {
    const std::string piece = stream.Push({id});
    EXPECT_EQ(piece.find("\xEF\xBF\xBD"), std::string::npos) << "an unfinished character leaked";
    streamed += piece;
  }
  streamed += stream.Finish();
  EXPECT_EQ(streamed, text);
}

TEST(Tokenizer, BadFilesNameThePath) {
  const std::string dir = testing::TempDir();
  absl::StatusOr<std::unique_ptr<Tokenizer>> missing = LoadSentencePieceFile(dir + "/nope.model");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(dir + "/nope.model"), std::string::npos);

  const std::string garbage = dir + "/garbage.model";
  FILE* f = fopen(garbage.c_str(), "wb");
  fputs("this is not a protobuf \x01\x02\x03", f);
  fclose(f);
  absl::StatusOr<std::unique_ptr<Tokenizer>> bad = LoadSentencePieceFile(garbage);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(garbage), std::string::npos);
  EXPECT_NE(bad.status().message().find("not a SentencePiece model"), std::string::npos);

  const std::string empty = dir + "/empty.model";
  fclose(fopen(empty.c_str(), "wb"));
  EXPECT_FALSE(LoadSentencePieceFile(empty).ok());
  EXPECT_FALSE(LoadSentencePieceFile(dir).ok());
}

}  // namespace
}  // namespace toyllm
