// Byte-level BPE against llama.cpp's own tokenizer test suite (the vocab GGUFs and their
// .inp/.out files in ../shared/tokenizers/llamacpp-vocab: llama.cpp's ids for each text)
// and against Hugging Face tokenizer.json files whose ids llama.cpp's suite also holds;
// plus round trips, streaming decode and the errors a broken vocabulary gets.
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "models/gguf_reader.h"
#include "models/gguf_writer.h"
#include "models/llama_gguf_export.h"
#include "tests/test_env.h"
#include "tests/test_util.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/load_tokenizer.h"
#include "tokenizer/tokenizer_json.h"
#include "tokenizer/text_stream.h"

namespace toyllm {
namespace {

using ::toyllm::testing::SharedPath;

std::string VocabPath(const std::string& name) {
  return SharedPath("tokenizers", "llamacpp-vocab/ggml-vocab-" + name + ".gguf");
}

struct Case {
  std::string text;
  std::vector<int> ids;
};

// llama.cpp's test-tokenizer-0 format: texts separated by "\n__ggml_vocab_test__\n" (one
// after the last too), and a line of ids per text.
std::vector<Case> ReadCases(const std::string& name) {
  const std::string base = "llamacpp-vocab/ggml-vocab-" + name + ".gguf";
  std::vector<std::string> texts =
      absl::StrSplit(testing::ReadFile(SharedPath("tokenizers", base + ".inp")), "\n__ggml_vocab_test__\n");
  std::vector<std::string> lines = absl::StrSplit(testing::ReadFile(SharedPath("tokenizers", base + ".out")), '\n');
  if (!texts.empty() && texts.back().empty()) texts.pop_back();
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  EXPECT_EQ(texts.size(), lines.size()) << name;
  std::vector<Case> cases;
  for (size_t i = 0; i < texts.size() && i < lines.size(); ++i) {
    Case c{texts[i], {}};
    for (absl::string_view id : absl::StrSplit(lines[i], ' ', absl::SkipEmpty())) {
      int value = 0;
      EXPECT_TRUE(absl::SimpleAtoi(id, &value)) << id;
      c.ids.push_back(value);
    }
    cases.push_back(c);
  }
  return cases;
}

std::unique_ptr<Tokenizer> FromGguf(const std::string& path) {
  absl::StatusOr<Vocabulary> v = ReadGgufVocabulary(path);
  EXPECT_TRUE(v.ok()) << v.status();
  if (!v.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<Tokenizer>> t = LoadTokenizer(*v, path);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

std::unique_ptr<Tokenizer> FromFile(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Tokenizer>> t = LoadTokenizerFile(path);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

void ExpectCases(const Tokenizer& t, const std::vector<Case>& cases, const std::string& name) {
  ASSERT_FALSE(cases.empty());
  for (const Case& c : cases) {
    EXPECT_EQ(t.Encode(c.text, /*add_bos=*/false), c.ids) << name << ": '" << c.text << "'";
    EXPECT_EQ(t.Decode(c.ids), c.text) << name;
  }
}

class LlamaCppVocab : public ::testing::TestWithParam<const char*> {};

TEST_P(LlamaCppVocab, MatchesLlamaCppIds) {
  const std::string path = VocabPath(GetParam());
  TOYLLM_REQUIRE_FILE(path);
  std::unique_ptr<Tokenizer> t = FromGguf(path);
  ASSERT_NE(t, nullptr);
  ExpectCases(*t, ReadCases(GetParam()), GetParam());
}

// llama-spm and phi-3 are SentencePiece vocabularies: the GGUF arrays rebuilt as a ModelProto.
INSTANTIATE_TEST_SUITE_P(SentencePiece, LlamaCppVocab, ::testing::Values("llama-spm", "phi-3"));

INSTANTIATE_TEST_SUITE_P(Bpe, LlamaCppVocab,
                         ::testing::Values("gpt-2", "deepseek-coder", "deepseek-llm", "falcon", "mpt",
                                           "refact", "starcoder"));

// The vocabularies llama.cpp's suite has ids for but no GGUF: their tokenizer.json files.
TEST(TokenizerJson, Llama3MatchesLlamaCppIds) {
  const std::string path = SharedPath("tokenizers", "hf/llama3/tokenizer.json");
  TOYLLM_REQUIRE_FILE(path);
  std::unique_ptr<Tokenizer> t = FromFile(path);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->vocabulary().pre, "llama-bpe");
  EXPECT_TRUE(t->add_bos());
  EXPECT_EQ(t->bos_id(), 128000);
  ExpectCases(*t, ReadCases("llama-bpe"), "llama-bpe");
  EXPECT_EQ(t->Encode("<|begin_of_text|>hi<|eot_id|>", false), (std::vector<int>{128000, 6151, 128009}));
  EXPECT_TRUE(t->IsEndOfGeneration(128009));  // <|eot_id|>
  EXPECT_TRUE(t->IsEndOfGeneration(128001));  // <|end_of_text|>, the eos
}

TEST(TokenizerJson, Qwen3MatchesLlamaCppIds) {
  const std::string path = SharedPath("tokenizers", "hf/qwen3/tokenizer.json");
  TOYLLM_REQUIRE_FILE(path);
  std::unique_ptr<Tokenizer> t = FromFile(path);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->vocabulary().pre, "qwen2");
  EXPECT_FALSE(t->add_bos());
  EXPECT_EQ(t->eos_id(), 151645);
  ExpectCases(*t, ReadCases("qwen2"), "qwen2");
  EXPECT_EQ(t->Encode("<|im_start|>user\n", false), (std::vector<int>{151644, 872, 198}));
  EXPECT_TRUE(t->IsEndOfGeneration(151645));  // <|im_end|>
  EXPECT_TRUE(t->IsEndOfGeneration(151643));  // <|endoftext|>
  EXPECT_FALSE(t->IsEndOfGeneration(151644));
}

// What `toyllm convert` writes of a tokenizer.json (llama.cpp's gpt2 keys) reads back as
// the same tokenizer: the named pre-tokenizer, the specials, and every test text's ids.
TEST(TokenizerJson, SurvivesGgufExport) {
  for (auto [json, cases] : {std::pair{"hf/qwen3/tokenizer.json", "qwen2"}, std::pair{"hf/llama3/tokenizer.json", "llama-bpe"}}) {
    const std::string path = SharedPath("tokenizers", json);
    TOYLLM_REQUIRE_FILE(path);
    std::unique_ptr<Tokenizer> original = FromFile(path);
    ASSERT_NE(original, nullptr);
    GgufWriter w;
    AddTokenizerKeys(*original, w);
    const std::string gguf = testing::TempDir() + "/vocab.gguf";
    ASSERT_TRUE(w.Write(gguf).ok());
    std::unique_ptr<Tokenizer> t = FromGguf(gguf);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->vocabulary().pre, cases);
    EXPECT_EQ(t->vocabulary().merges, original->vocabulary().merges);
    EXPECT_EQ(t->add_bos(), original->add_bos());
    EXPECT_EQ(t->eos_id(), original->eos_id());
    for (int id = 0; id < t->vocab_size(); ++id) ASSERT_EQ(t->Type(id), original->Type(id)) << id;
    ExpectCases(*t, ReadCases(cases), cases);
  }
}

// The zoo's GGUF models carry real tokenizers; llama.cpp's ids for their prompts are golden.
// llama31-Q4_K_M.gguf's tokenizer is Llama 3's, read here from tokenizer.json while GGUF
// files with Q4_K tensors do not parse yet.
TEST(ZooTokenizers, MatchLlamaCppPromptIds) {
  for (auto [path, golden] : {std::pair{SharedPath("zoo", "models/qwen2-Q8_0.gguf"), "qwen2/Q8_0"},
                              std::pair{SharedPath("tokenizers", "hf/llama3/tokenizer.json"), "llama31/Q4_K_M"}}) {
    const std::string model = path;
    TOYLLM_REQUIRE_FILE(path);
    std::unique_ptr<Tokenizer> t = absl::EndsWith(path, ".gguf") ? FromGguf(path) : FromFile(path);
    ASSERT_NE(t, nullptr);
    for (const char* prompt : {"p1", "p2"}) {
      const std::string json = SharedPath("zoo", std::string("golden/") + golden + "/" + prompt + ".json");
      if (!std::ifstream(json)) continue;  // not every model has every prompt
      const std::string text = testing::ReadFile(SharedPath("zoo", std::string("prompts/") + prompt + ".txt"));
      const std::string golden_text = testing::ReadFile(json);
      const size_t open = golden_text.find("\"ids\": [");
      ASSERT_NE(open, std::string::npos);
      const size_t close = golden_text.find(']', open);
      std::vector<int> ids;
      for (absl::string_view id : absl::StrSplit(golden_text.substr(open + 8, close - open - 8), ", ")) {
        int value = 0;
        ASSERT_TRUE(absl::SimpleAtoi(id, &value));
        ids.push_back(value);
      }
      const bool add_bos = golden_text.find("\"add_bos\": true") != std::string::npos;
      EXPECT_EQ(t->add_bos(), add_bos) << model;
      EXPECT_EQ(t->Encode(text, add_bos), ids) << model << " " << prompt;
    }
  }
}

TEST(TokenizerJson, RoundTripsRandomUtf8) {
  const std::string path = SharedPath("tokenizers", "hf/qwen3/tokenizer.json");
  TOYLLM_REQUIRE_FILE(path);
  std::unique_ptr<Tokenizer> t = FromFile(path);
  ASSERT_NE(t, nullptr);
  std::mt19937 rng(12);
  // Code points from ASCII, Latin, CJK, emoji and the spaces; plus raw invalid bytes.
  const std::vector<std::pair<uint32_t, uint32_t>> ranges = {
      {0x00, 0x7F}, {0xA0, 0x24F}, {0x4E00, 0x9FFF}, {0x1F300, 0x1F64F}, {0x2000, 0x200B}};
  for (int n = 0; n < 200; ++n) {
    std::string text;
    const int length = rng() % 40;
    for (int i = 0; i < length; ++i) {
      if (rng() % 20 == 0) {
        text.push_back(static_cast<char>(0x80 + rng() % 0x80));  // not UTF-8: still exact
        continue;
      }
      const auto [lo, hi] = ranges[rng() % ranges.size()];
      const uint32_t cp = lo + rng() % (hi - lo + 1);
      std::string utf8;
      if (cp < 0x80) {
        utf8 = std::string(1, static_cast<char>(cp));
      } else if (cp < 0x800) {
        utf8 = {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
      } else if (cp < 0x10000) {
        utf8 = {static_cast<char>(0xE0 | (cp >> 12)), static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
                static_cast<char>(0x80 | (cp & 0x3F))};
      } else {
        utf8 = {static_cast<char>(0xF0 | (cp >> 18)), static_cast<char>(0x80 | ((cp >> 12) & 0x3F)),
                static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), static_cast<char>(0x80 | (cp & 0x3F))};
      }
      text += utf8;
    }
    // NFC may change valid text; compare with what the tokenizer saw.
    const std::vector<int> ids = t->Encode(text, false);
    const std::string decoded = t->Decode(ids);
    EXPECT_EQ(t->Encode(decoded, false), ids);
  }
  for (const std::string text : {"这个动物并没有过马路，因为它太累了。", "tabs\tand\n\nnewlines  ", "🐱\xff\xfe"}) {
    EXPECT_EQ(t->Decode(t->Encode(text, false)), text);
  }
}

TEST(TokenizerJson, StreamHoldsIncompleteCharacters) {
  const std::string path = SharedPath("tokenizers", "hf/qwen3/tokenizer.json");
  TOYLLM_REQUIRE_FILE(path);
  std::unique_ptr<Tokenizer> t = FromFile(path);
  ASSERT_NE(t, nullptr);
  const std::string text = "猫𠀋 cat";  // U+2000B, a rare ideograph: several byte tokens
  TextStream stream(*t);
  std::string streamed;
  for (int id : t->Encode(text, false)) {
    const std::string part = stream.Push({id});
    // Every piece the stream lets out is whole characters.
    EXPECT_TRUE(part.empty() || part == "猫" || part == "𠀋" || part == " cat") << part;
    streamed += part;
  }
  streamed += stream.Finish();
  EXPECT_EQ(streamed, text);
  // The emoji is several byte-level tokens: its first one alone is shown as bytes.
  const std::vector<int> cat = t->Encode("𠀋", false);
  ASSERT_GT(cat.size(), 1u);
  EXPECT_EQ(t->Readable(cat[0]).substr(0, 3), "<0x");
  EXPECT_EQ(t->Readable(t->Encode(" cat", false)[0]), " cat");
}

absl::Status JsonError(const std::string& json) {
  absl::StatusOr<Vocabulary> v = ParseTokenizerJson(json, "", "t.json");
  if (!v.ok()) return v.status();
  absl::StatusOr<std::unique_ptr<Tokenizer>> t = LoadTokenizer(*v, "t.json");
  return t.status();
}

TEST(TokenizerJson, BadFilesGetOneLineErrors) {
  const std::string ok_model =
      R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})";
  const std::string byte_level = R"("pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false})";
  EXPECT_TRUE(JsonError("{" + ok_model + ", " + byte_level + "}").ok());
  for (auto [json, message] : std::vector<std::pair<std::string, std::string>>{
           {"not json", "t.json: not JSON"},
           {"{\"version\": 1}", "t.json: no 'model' section"},
           {R"({"model": {"type": "WordPiece"}})", "model type 'WordPiece' (only BPE) is not supported"},
           {R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a c"]}, )" + byte_level + "}",
            "merge 0 'a c' makes or uses 'c', which is not in the vocabulary"},
           {R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}, )" + byte_level + "}",
            "id 0 is given to both"},
           {"{" + ok_model + R"(, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", )"
                R"("behavior": "Isolated", "pattern": {"Regex": "(a"}}, {"type": "ByteLevel"}]}})",
            "the pre-tokenizer regex '(a' is rejected"},
           {"{" + ok_model + R"(, "pre_tokenizer": {"type": "Metaspace"}})", "pre_tokenizer 'Metaspace' is not supported"},
           {R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 9999999}, "merges": []}, )" + byte_level + "}",
            "the ids run to 9999999 but there are only 2 tokens"},
           {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "normalizer": {"type": "Lowercase"}, )" +
                byte_level + "}",
            "normalizer 'Lowercase' is not supported"},
       }) {
    const absl::Status s = JsonError(json);
    EXPECT_FALSE(s.ok()) << json;
    EXPECT_NE(s.message().find(message), std::string::npos) << s.message();
    EXPECT_EQ(std::string(s.message()).find('\n'), std::string::npos);
  }
}

// GGUF files whose gpt2 keys do not fit together.
TEST(BpeVocabulary, BadGgufKeysGetOneLineErrors) {
  const std::string path = testing::TempDir() + "/bad.gguf";
  const auto error = [&path](const std::function<void(GgufWriter&)>& add) {
    GgufWriter w;
    w.AddString("tokenizer.ggml.model", "gpt2");
    add(w);
    EXPECT_TRUE(w.Write(path).ok());
    absl::StatusOr<Vocabulary> v = ReadGgufVocabulary(path);
    if (!v.ok()) return std::string(v.status().message());
    absl::StatusOr<std::unique_ptr<Tokenizer>> t = LoadTokenizer(*v, path);
    return t.ok() ? std::string("loaded") : std::string(t.status().message());
  };
  EXPECT_EQ(error([](GgufWriter& w) {
              w.AddStringArray("tokenizer.ggml.tokens", {"a", "b", "ab"});
              w.AddInt32Array("tokenizer.ggml.token_type", {1, 1});
              w.AddStringArray("tokenizer.ggml.merges", {"a b"});
            }),
            path + ": tokenizer.ggml.token_type has 2 entries for 3 tokens");
  EXPECT_NE(error([](GgufWriter& w) {
              w.AddStringArray("tokenizer.ggml.tokens", {"a", "b", "ab"});
              w.AddInt32Array("tokenizer.ggml.merges", {1, 2});
            }).find("tokenizer.ggml.merges"),
            std::string::npos);
  EXPECT_NE(error([](GgufWriter& w) { w.AddInt32Array("tokenizer.ggml.tokens", {1, 2}); }).find("tokenizer.ggml.tokens"),
            std::string::npos);
  EXPECT_EQ(error([](GgufWriter& w) {
              w.AddStringArray("tokenizer.ggml.tokens", {"a", "b", "ab"});
              w.AddStringArray("tokenizer.ggml.merges", {"a b"});
              w.AddUint32("tokenizer.ggml.eos_token_id", 7);
            }),
            path + ": tokenizer.ggml.eos_token_id = 7 is outside the 3 tokens");
  EXPECT_EQ(error([](GgufWriter& w) {
              w.AddStringArray("tokenizer.ggml.tokens", {"a", "b", "ab"});
              w.AddStringArray("tokenizer.ggml.merges", {"a b"});
            }),
            "loaded");
}

TEST(BpeVocabulary, UnknownPreTokenizerNamesTheKnownOnes) {
  Vocabulary v;
  v.model = "gpt2";
  v.tokens = {"a"};
  v.pre = "klingon";
  absl::StatusOr<std::unique_ptr<Tokenizer>> t = LoadTokenizer(v, "x.gguf");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("x.gguf: pre-tokenizer 'klingon' is unknown (known: "), std::string::npos);
  EXPECT_NE(t.status().message().find("llama-bpe"), std::string::npos);
}

// `toyllm tokenize` with each kind of --tokenizer file, as a user runs it.
TEST(TokenizeCommand, QwenAndLlama3OnTheArticlesSentence) {
  const std::string qwen = SharedPath("tokenizers", "hf/qwen3/tokenizer.json");
  const std::string llama3 = SharedPath("tokenizers", "hf/llama3/tokenizer.json");
  TOYLLM_REQUIRE_FILE(qwen);
  TOYLLM_REQUIRE_FILE(llama3);
  const std::string sentence = "这个动物并没有过马路，因为它太累了。它指的是";
  // llama.cpp's ids for this prompt (zoo/golden/qwen2/Q8_0/p1.json); Qwen adds no BOS.
  testing::RunResult r = testing::RunToyllm({"tokenize", "--tokenizer", qwen, "-p", sentence, "--ids"});
  ASSERT_TRUE(testing::Succeeds(r));
  EXPECT_EQ(r.out, "99487 101239 104065 38182 109637 3837 108884 99222 112428 1773 99652 111198\n");
  // Llama 3 adds BOS unless --no-bos; -f reads the text exactly, newline and tab included.
  const std::string file = testing::WriteFile(testing::TempDir() + "/text.txt", "hi\tthere\n");
  r = testing::RunToyllm({"tokenize", "--tokenizer", llama3, "-f", file});
  ASSERT_TRUE(testing::Succeeds(r));
  EXPECT_EQ(r.out, "128000 -> '<|begin_of_text|>'\n6151 -> 'hi'\n197 -> '\\t'\n19041 -> 'there'\n198 -> '\\n'\n");
  r = testing::RunToyllm({"tokenize", "--tokenizer", llama3, "-f", file, "--no-bos", "--ids"});
  ASSERT_TRUE(testing::Succeeds(r));
  EXPECT_EQ(r.out, "6151 197 19041 198\n");
}

TEST(TokenizeCommand, ReadsAGgufFilesTokenizer) {
  const std::string gguf = VocabPath("gpt-2");
  TOYLLM_REQUIRE_FILE(gguf);
  testing::RunResult r = testing::RunToyllm({"tokenize", "--tokenizer", gguf, "-p", "Hello world"});
  ASSERT_TRUE(testing::Succeeds(r));
  EXPECT_EQ(r.out, "15496 -> 'Hello'\n995 -> ' world'\n");
}

}  // namespace
}  // namespace toyllm
