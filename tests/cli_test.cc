// The `toyllm` command line, run as a subprocess the way a user runs it: exit status, stdout
// and stderr are captured separately, arguments go to exec directly (no shell), and a run
// that hangs is killed and fails after a timeout instead of blocking the suite.
//
// Every bad input must give a non-zero exit, exactly one line on stderr naming the file or
// flag and the problem, nothing on stdout, and no crash (signal, uncaught exception,
// sanitizer report).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/gguf_writer.h"
#include "tests/test_env.h"
#include "tests/test_util.h"
#include "tokenizer/load_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace toyllm {
namespace {

using ::toyllm::testing::Describe;
using ::toyllm::testing::GoldenDir;
using ::toyllm::testing::ListDir;
using ::toyllm::testing::ModelPath;
using ::toyllm::testing::PathExists;
using ::toyllm::testing::QuotedArgs;
using ::toyllm::testing::ReadFile;
using ::toyllm::testing::RunResult;
using ::toyllm::testing::RunToyllm;
using ::toyllm::testing::Stories260K;
using ::toyllm::testing::Succeeds;
using ::toyllm::testing::TempDir;
using ::toyllm::testing::Tok512;
using ::toyllm::testing::WriteFile;

// ---------------------------------------------------------------------------------------
// Judging a run.

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Signs of a crash rather than an orderly error.
constexpr const char* kCrashMarkers[] = {
    "terminate called", "what():", "Aborted", "core dumped", "Segmentation fault",
    "Sanitizer", "runtime error:", "Assertion", "stack-overflow", "bad_alloc",
};

// A clean failure: non-zero exit, no signal, nothing on stdout, exactly one line on stderr
// that starts with "toyllm", contains every string of `all_of` (exactly) and at least one
// of `any_of` (ignoring case), and shows no sign of a crash.
::testing::AssertionResult FailsCleanly(const RunResult& r, const std::vector<std::string>& all_of,
                                        const std::vector<std::string>& any_of = {}) {
  const auto failure = [&r](const std::string& why) {
    return ::testing::AssertionFailure() << why << "\n" << Describe(r);
  };
  if (!r.started) return failure("the binary did not start");
  if (r.timed_out) return failure("it hung");
  if (!r.exited) return failure("it died of a signal instead of exiting");
  if (r.exit_code == 0) return failure("it exited 0 on bad input");
  for (const char* marker : kCrashMarkers) {
    if (Contains(r.err, marker) || Contains(r.out, marker)) {
      return failure(std::string("the output shows a crash (\"") + marker + "\")");
    }
  }
  if (!r.out.empty()) return failure("it wrote to stdout");
  if (std::count(r.err.begin(), r.err.end(), '\n') != 1 || r.err.back() != '\n') {
    return failure("stderr is not exactly one line");
  }
  if (r.err.rfind("toyllm", 0) != 0) return failure("the error line does not start with 'toyllm'");
  for (const std::string& s : all_of) {
    if (!Contains(r.err, s)) return failure("the error does not mention '" + s + "'");
  }
  if (!any_of.empty()) {
    bool found = false;
    for (const std::string& s : any_of) found = found || Contains(Lower(r.err), Lower(s));
    if (!found) {
      std::string list;
      for (const std::string& s : any_of) list += " '" + s + "'";
      return failure("the error mentions none of" + list);
    }
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------------------
// Files for the tests.

std::string Int32s(const std::vector<int32_t>& values) {
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// A golden file under GoldenDir(), or "" (with a loud message) when it is missing.
std::string GoldenPath(const std::string& name) {
  const std::string path = GoldenDir() + "/stories260K/" + name;
  if (PathExists(path)) return path;
  std::cerr << "\n*** GOLDEN FILE MISSING: " << path << " ***\n\n";
  return "";
}

// The stories260K header: dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
// context_length (the tokenizer shares the embedding, so vocab_size is positive).
const std::vector<int32_t> kStoriesHeader = {64, 172, 5, 8, 4, 512, 512};

// Every subcommand that opens a model, given the model path, for checking that each
// reports a bad model file the same clean way. generate and logits also get a tokenizer
// when the shared one is there.
std::vector<std::vector<std::string>> CommandsOpening(const std::string& model, const std::string& out_dir) {
  std::vector<std::vector<std::string>> commands = {
      {"info", "-m", model},
      {"tokenize", "-m", model, "-p", "hi"},
  };
  const std::string tok = Tok512();
  if (!tok.empty()) {
    commands.push_back({"generate", "-m", model, "--tokenizer", tok, "-n", "2", "--temp", "0"});
    commands.push_back({"logits", "-m", model, "--tokenizer", tok, "-p", "hi", "-o", out_dir + "/out.npy"});
  }
  return commands;
}

// Runs every command of CommandsOpening(model) and expects a clean failure naming the
// model file and mentioning one of `any_of`; no output file may appear.
void ExpectEveryCommandRejects(const std::string& model, const std::vector<std::string>& any_of) {
  const std::string out_dir = TempDir();
  for (const std::vector<std::string>& command : CommandsOpening(model, out_dir)) {
    EXPECT_TRUE(FailsCleanly(RunToyllm(command), {model}, any_of)) << "toyllm " << QuotedArgs(command);
  }
  EXPECT_EQ(ListDir(out_dir), std::vector<std::string>{}) << "a failed logits left a file behind";
}

// ---------------------------------------------------------------------------------------
// Bad model files.

TEST(cli_model_file, MissingFile) {
  const std::string model = TempDir() + "/no_such_model.bin";
  ExpectEveryCommandRejects(model, {"no such file", "cannot open", "not found", "does not exist"});
}

TEST(cli_model_file, EmptyFile) {
  const std::string model = TempDir() + "/empty.bin";
  WriteFile(model, "");
  ExpectEveryCommandRejects(model, {"empty", "too short", "0 bytes"});
}

TEST(cli_model_file, Directory) {
  const std::string dir = TempDir();
  ExpectEveryCommandRejects(dir, {"not a regular file", "directory"});
}

TEST(cli_model_file, TooShortForAHeader) {
  const std::string model = TempDir() + "/short.bin";
  WriteFile(model, Int32s({64, 172, 5}));  // 12 bytes of a 28-byte header
  ExpectEveryCommandRejects(model, {"too short", "truncated", "bytes"});
}

TEST(cli_model_file, HeaderWithoutWeights) {
  // A plausible header whose weights are missing: synthesised, so no shared file is needed.
  const std::string model = TempDir() + "/header_only.bin";
  WriteFile(model, Int32s(kStoriesHeader) + std::string(1000, '\0'));
  ExpectEveryCommandRejects(model, {"truncated", "bytes"});
}

TEST(cli_model_file, TruncatedRealModel) {
  const std::string source = Stories260K();
  TOYLLM_REQUIRE_FILE(source);
  const std::string bytes = ReadFile(source);
  ASSERT_GT(bytes.size(), 100000u);
  const std::string dir = TempDir();
  for (size_t keep : {size_t{20}, size_t{1000}, bytes.size() / 2, bytes.size() - 4}) {
    SCOPED_TRACE(::testing::Message() << "kept " << keep << " of " << bytes.size() << " bytes");
    const std::string model = dir + "/truncated_" + std::to_string(keep) + ".bin";
    WriteFile(model, bytes.substr(0, keep));
    ExpectEveryCommandRejects(model, {"truncated", "too short", "bytes"});
  }
  // Extra bytes at the end are as wrong as missing ones.
  const std::string longer = dir + "/trailing.bin";
  WriteFile(longer, bytes + std::string(64, '\0'));
  ExpectEveryCommandRejects(longer, {"bytes", "size"});
}

TEST(cli_model_file, CorruptedHeaders) {
  struct Case {
    std::vector<int32_t> header;
    std::vector<std::string> any_of;  // what the message should blame
  };
  const int32_t kMax = 2147483647, kMin = -2147483647 - 1;
  const Case cases[] = {
      {{kMax, 172, 5, 8, 4, 512, 512}, {"dim"}},
      {{65536 * 4, 172, 5, 8, 4, 512, 512}, {"dim"}},
      {{-64, 172, 5, 8, 4, 512, 512}, {"dim"}},
      {{64, kMax, 5, 8, 4, 512, 512}, {"hidden_dim"}},
      {{64, 172, kMax, 8, 4, 512, 512}, {"n_layers", "layers"}},
      {{64, 172, 0, 8, 4, 512, 512}, {"n_layers", "layers"}},
      {{64, 172, 5, 0, 4, 512, 512}, {"n_heads", "heads"}},
      {{64, 172, 5, 8, 3, 512, 512}, {"n_kv_heads", "kv"}},
      {{64, 172, 5, 8, 16, 512, 512}, {"n_kv_heads", "kv"}},
      {{64, 172, 5, 8, -4, 512, 512}, {"n_kv_heads", "kv"}},
      {{64, 172, 5, 8, 4, kMin, 512}, {"vocab"}},
      {{64, 172, 5, 8, 4, kMax, 512}, {"vocab"}},
      {{64, 172, 5, 8, 4, 512, kMax}, {"context"}},
      {{64, 172, 5, 8, 4, 512, -1}, {"context"}},
      {{0, 0, 0, 0, 0, 0, 0}, {"dim", "header"}},
      {{-1, -1, -1, -1, -1, -1, -1}, {"dim", "header"}},
      // Each value in range, but together far more bytes than the file has.
      {{65536, 262144, 1024, 1024, 1024, 4194304, 4194304}, {"bytes", "truncated"}},
  };
  const std::string dir = TempDir();
  int index = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "header " << ::testing::PrintToString(c.header));
    const std::string model = dir + "/corrupt_" + std::to_string(index++) + ".bin";
    WriteFile(model, Int32s(c.header) + std::string(4096, '\x01'));
    ExpectEveryCommandRejects(model, c.any_of);
  }
}

TEST(cli_model_file, UnsupportedVersionedFile) {
  // llama2.c's versioned exports start with the magic 0x616b3432 (struct.pack('I', ...),
  // so "24ka" on disk) and a version number; version 7 does not exist.
  const std::string dir = TempDir();
  const std::string v7 = dir + "/v7.bin";
  WriteFile(v7, Int32s({0x616b3432, 7}) + Int32s(kStoriesHeader) + std::string(4096, '\0'));
  ExpectEveryCommandRejects(v7, {"version"});
  // A version-1 header cut short.
  const std::string short_v1 = dir + "/short_v1.bin";
  WriteFile(short_v1, Int32s({0x616b3432, 1}) + Int32s(kStoriesHeader));
  ExpectEveryCommandRejects(short_v1, {"too short", "truncated", "bytes"});
}

// ---------------------------------------------------------------------------------------
// Bad tokenizers.

class cli_tokenizer : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = Stories260K();
    TOYLLM_REQUIRE_FILE(model_);
    dir_ = TempDir();
  }

  // generate, logits and tokenize with `tokenizer`.
  void ExpectRejected(const std::string& tokenizer, const std::vector<std::string>& all_of,
                      const std::vector<std::string>& any_of) {
    const std::vector<std::vector<std::string>> commands = {
        {"generate", "-m", model_, "--tokenizer", tokenizer, "-n", "2"},
        {"logits", "-m", model_, "--tokenizer", tokenizer, "-o", dir_ + "/out.npy"},
    };
    for (const auto& command : commands) {
      EXPECT_TRUE(FailsCleanly(RunToyllm(command), all_of, any_of)) << "toyllm " << QuotedArgs(command);
    }
    EXPECT_FALSE(PathExists(dir_ + "/out.npy"));
  }

  std::string model_;
  std::string dir_;
};

TEST_F(cli_tokenizer, MissingFile) {
  const std::string tokenizer = dir_ + "/missing.model";
  ExpectRejected(tokenizer, {tokenizer}, {"cannot open", "no such file", "not found"});
  EXPECT_TRUE(FailsCleanly(RunToyllm({"tokenize", "--tokenizer", tokenizer, "-p", "hi"}), {tokenizer},
                           {"cannot open", "no such file", "not found"}));
}

TEST_F(cli_tokenizer, Llama2cTokenizerBinIsNotSentencePiece) {
  const std::string tokenizer = ModelPath("stories260K/tok512.bin");
  TOYLLM_REQUIRE_FILE(tokenizer);
  ExpectRejected(tokenizer, {tokenizer}, {"SentencePiece"});
  EXPECT_TRUE(FailsCleanly(RunToyllm({"tokenize", "--tokenizer", tokenizer, "-p", "hi"}), {tokenizer}, {"SentencePiece"}));
}

TEST_F(cli_tokenizer, EmptyFileAndDirectory) {
  const std::string empty = dir_ + "/empty.model";
  WriteFile(empty, "");
  ExpectRejected(empty, {empty}, {"SentencePiece", "empty"});
  const std::string directory = TempDir();
  ExpectRejected(directory, {directory}, {"SentencePiece", "directory", "not a regular file"});
}

TEST_F(cli_tokenizer, GarbageFile) {
  const std::string garbage = dir_ + "/garbage.model";
  std::string bytes;
  for (int i = 0; i < 5000; ++i) bytes.push_back(static_cast<char>((i * 7919 + 13) % 251));
  WriteFile(garbage, bytes);
  ExpectRejected(garbage, {garbage}, {"SentencePiece"});
}

TEST_F(cli_tokenizer, VocabularyDoesNotFitTheModel) {
  const std::string tokenizer = ModelPath("llama2-tokenizer/tokenizer.model");
  TOYLLM_REQUIRE_FILE(tokenizer);
  ExpectRejected(tokenizer, {tokenizer, "32000", "512"}, {"vocab", "tokens"});
}

TEST_F(cli_tokenizer, NoneGivenAndNoneBesideTheModel) {
  // The model alone in a folder (as a symlink): no tok512.model or tokenizer.model beside it.
  const std::string model = dir_ + "/stories260K.bin";
  ASSERT_EQ(symlink(model_.c_str(), model.c_str()), 0) << strerror(errno);
  EXPECT_TRUE(FailsCleanly(RunToyllm({"generate", "-m", model, "-n", "2"}), {model}, {"tokenizer"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"tokenize", "-m", model, "-p", "hi"}), {model}, {"tokenizer"}));
}

// Byte-level BPE tokenizers (tokenizer.json, or a GGUF file's keys) that are broken, or
// real but of another model.
TEST_F(cli_tokenizer, CorruptTokenizerJson) {
  const std::string json = WriteFile(dir_ + "/tokenizer.json", "{\"model\": {\"type\": \"BPE\", ");
  ExpectRejected(json, {json, "not JSON"}, {});
  EXPECT_TRUE(FailsCleanly(RunToyllm({"tokenize", "--tokenizer", json, "-p", "hi"}), {json, "not JSON"}));
}

TEST_F(cli_tokenizer, MergesNamingUnknownTokens) {
  const std::string json = WriteFile(
      dir_ + "/tokenizer.json",
      R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b", "b q"]},)"
      R"( "pre_tokenizer": {"type": "ByteLevel"}})");
  EXPECT_TRUE(FailsCleanly(RunToyllm({"tokenize", "--tokenizer", json, "-p", "hi"}),
                           {json, "merge 1 'b q'", "'q', which is not in the vocabulary"}));
}

TEST_F(cli_tokenizer, UnknownPreTokenizer) {
  GgufWriter w;
  w.AddString("tokenizer.ggml.model", "gpt2");
  w.AddStringArray("tokenizer.ggml.tokens", {"a", "b", "ab"});
  w.AddStringArray("tokenizer.ggml.merges", {"a b"});
  w.AddString("tokenizer.ggml.pre", "klingon");
  const std::string gguf = dir_ + "/vocab.gguf";
  ASSERT_TRUE(w.Write(gguf).ok());
  EXPECT_TRUE(FailsCleanly(RunToyllm({"tokenize", "--tokenizer", gguf, "-p", "hi"}),
                           {gguf, "pre-tokenizer 'klingon' is unknown", "llama-bpe", "qwen2", "gpt-2"}));
}

TEST_F(cli_tokenizer, ByteLevelVocabularyOfAnotherModel) {
  const std::string json = testing::SharedPath("tokenizers", "hf/qwen3/tokenizer.json");
  TOYLLM_REQUIRE_FILE(json);
  ExpectRejected(json, {json, "151669", "512"}, {"tokens"});
}

// Qwen's tokenizer.json is a few hundred tokens short of its embedding (padding), but a
// byte-level tokenizer far shorter is another model's: Llama 3's on the zoo's Qwen2.
TEST_F(cli_tokenizer, ByteLevelVocabularyFarShorterThanTheModels) {
  const std::string qwen2 = testing::SharedPath("zoo", "models/qwen2-Q8_0.gguf");
  const std::string llama3 = testing::SharedPath("tokenizers", "hf/llama3/tokenizer.json");
  const std::string qwen3 = testing::SharedPath("tokenizers", "hf/qwen3/tokenizer.json");
  TOYLLM_REQUIRE_FILE(qwen2);
  TOYLLM_REQUIRE_FILE(llama3);
  TOYLLM_REQUIRE_FILE(qwen3);
  EXPECT_TRUE(FailsCleanly(RunToyllm({"generate", "-m", qwen2, "--tokenizer", llama3, "-p", "hi", "-n", "2"}),
                           {llama3, "128256", "151936"}));
  EXPECT_TRUE(Succeeds(RunToyllm({"generate", "-m", qwen2, "--tokenizer", qwen3, "-p", "hi", "-n", "2"})));
}

// ---------------------------------------------------------------------------------------
// Bad flags and values.

// generate's model-independent checks come first, but run them against a real model so
// that a check done late (after loading) is exercised too.
struct FlagCase {
  const char* name;
  std::vector<std::string> extra_args;
  std::vector<std::string> all_of;
  std::vector<std::string> any_of;
};

void PrintTo(const FlagCase& c, std::ostream* os) { *os << c.name; }

class cli_generate_flag : public ::testing::TestWithParam<FlagCase> {};

TEST_P(cli_generate_flag, FailsCleanly) {
  const std::string model = Stories260K(), tok = Tok512();
  TOYLLM_REQUIRE_FILE(model);
  TOYLLM_REQUIRE_FILE(tok);
  std::vector<std::string> args = {"generate", "-m", model, "--tokenizer", tok, "-p", "Once upon a time"};
  args.insert(args.end(), GetParam().extra_args.begin(), GetParam().extra_args.end());
  EXPECT_TRUE(FailsCleanly(RunToyllm(args), GetParam().all_of, GetParam().any_of)) << "toyllm " << QuotedArgs(args);
}

const std::string kLongPrompt =
    "Once upon a time there was a little girl named Lily who loved to play outside in the sun "
    "with her friends and her big red ball.";

INSTANTIATE_TEST_SUITE_P(
    BadValues, cli_generate_flag,
    ::testing::Values(
        FlagCase{"temp_negative", {"--temp", "-1"}, {"-1"}, {"temp"}},
        FlagCase{"temp_nan", {"--temp", "nan"}, {}, {"temp"}},
        FlagCase{"temp_inf", {"--temp", "inf"}, {}, {"temp"}},
        FlagCase{"temp_not_a_number", {"--temp", "warm"}, {"--temp", "warm"}, {}},
        FlagCase{"temp_empty", {"--temp="}, {"--temp"}, {}},
        FlagCase{"top_p_zero", {"--top-p", "0"}, {}, {"top-p"}},
        FlagCase{"top_p_above_one", {"--top-p", "1.5"}, {"1.5"}, {"top-p"}},
        FlagCase{"top_p_negative", {"--top-p=-0.5"}, {}, {"top-p"}},
        FlagCase{"top_p_nan", {"--top-p", "nan"}, {}, {"top-p"}},
        FlagCase{"top_k_negative", {"--top-k", "-3"}, {"-3"}, {"top-k"}},
        FlagCase{"top_k_fraction", {"--top-k", "2.5"}, {"--top-k", "2.5"}, {}},
        FlagCase{"seed_zero", {"--seed", "0"}, {}, {"seed"}},
        FlagCase{"seed_negative", {"--seed", "-1"}, {"--seed"}, {}},
        FlagCase{"seed_not_a_number", {"--seed", "abc"}, {"--seed", "abc"}, {}},
        FlagCase{"seed_beyond_64_bits", {"--seed", "18446744073709551616"}, {"--seed"}, {}},
        FlagCase{"n_predict_negative", {"-n", "-5"}, {"-5"}, {"n-predict", "-n"}},
        FlagCase{"n_predict_not_a_number", {"-n", "many"}, {"many"}, {"n-predict", "-n"}},
        FlagCase{"n_predict_beyond_int", {"-n", "99999999999"}, {}, {"n-predict", "-n"}},
        FlagCase{"threads_negative", {"-t", "-1"}, {"-1"}, {"threads", "-t"}},
        FlagCase{"threads_absurd", {"-t", "100000"}, {"100000"}, {"threads", "-t"}},
        FlagCase{"ctx_negative", {"-c", "-1"}, {"-1"}, {"ctx-size", "-c"}},
        FlagCase{"ctx_absurd", {"-c", "2000000000"}, {"2000000000"}, {"context", "ctx"}},
        FlagCase{"prompt_longer_than_context", {"-c", "8", "-p", kLongPrompt}, {"8"}, {"context", "-c"}},
        FlagCase{"unknown_long_flag", {"--bogus"}, {"--bogus"}, {"unknown"}},
        FlagCase{"unknown_flag_with_value", {"--bogus=3"}, {"--bogus"}, {"unknown"}},
        FlagCase{"unknown_short_flag", {"-z", "1"}, {"-z"}, {"unknown"}},
        FlagCase{"stray_argument", {"stray"}, {"stray"}, {}},
        FlagCase{"value_missing_at_end", {"--temp"}, {"--temp"}, {"value"}},
        FlagCase{"model_value_missing", {"-m"}, {}, {"model"}},
        FlagCase{"flag_of_another_command", {"-o", "x.npy"}, {"-o"}, {"unknown"}},
        // Checked before generating: the text streams to stdout before the maps are written.
        FlagCase{"dump_attention_folder_impossible",
                 {"-n", "2", "--dump-attention", "/nonexistent/maps"},
                 {"/nonexistent/maps", "cannot create folder"},
                 {}},
        FlagCase{"dump_attention_folder_is_a_file", {"-n", "2", "--dump-attention", "/dev/null"}, {"/dev/null", "not a folder"}, {}}),
    [](const ::testing::TestParamInfo<FlagCase>& info) { return std::string(info.param.name); });

// bench and convert --random: lists of counts, shapes and seeds.
class cli_bench_flag : public ::testing::TestWithParam<FlagCase> {};

TEST_P(cli_bench_flag, FailsCleanly) {
  const std::string model = Stories260K();
  TOYLLM_REQUIRE_FILE(model);
  std::vector<std::string> args = {"bench", "-m", model, "-p", "4", "-n", "4", "-r", "1"};
  args.insert(args.end(), GetParam().extra_args.begin(), GetParam().extra_args.end());
  EXPECT_TRUE(FailsCleanly(RunToyllm(args), GetParam().all_of, GetParam().any_of)) << "toyllm " << QuotedArgs(args);
}

INSTANTIATE_TEST_SUITE_P(
    BadValues, cli_bench_flag,
    ::testing::Values(
        FlagCase{"prompt_empty_list", {"-p", ""}, {"--n-prompt", "''"}, {"whole number"}},
        // -p 0 and -n 0 each skip their test (llama-bench's convention); both leave none.
        FlagCase{"no_tests", {"-p", "0", "-n", "0"}, {"no tests"}, {}},
        FlagCase{"prompt_empty_item", {"-p", "128,,512"}, {"--n-prompt", "''"}, {}},
        FlagCase{"prompt_absurd", {"-p", "100000000"}, {"--n-prompt", "100000000"}, {}},
        FlagCase{"gen_negative", {"-n", "-1"}, {"--n-gen", "'-1'"}, {}},
        FlagCase{"gen_not_a_number", {"-n", "lots"}, {"--n-gen", "lots"}, {}},
        FlagCase{"threads_zero", {"-t", "1,0"}, {"--threads", "'0'"}, {}},
        FlagCase{"threads_absurd", {"-t", "5000"}, {"--threads", "5000"}, {}},
        FlagCase{"repetitions_zero", {"-r", "0"}, {"--repetitions", "0"}, {}},
        FlagCase{"repetitions_negative", {"-r", "-2"}, {"--repetitions", "-2"}, {}},
        FlagCase{"json_with_value", {"--json=yes"}, {"--json"}, {}},
        FlagCase{"stray_argument", {"stray"}, {"stray"}, {}}),
    [](const ::testing::TestParamInfo<FlagCase>& info) { return std::string(info.param.name); });

TEST(cli_usage_error, BenchAndConvertRandom) {
  const std::string out = TempDir() + "/random.gguf";
  EXPECT_TRUE(FailsCleanly(RunToyllm({"bench"}), {"-m"}, {"model"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"bench", "-m", out}), {out}, {"cannot open", "no such"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"convert", "--random", "7B", "-o", out}),
                           {"--random", "'7B'", "15M, 110M, 1.1B"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"convert", "--random", "15M", "x.bin", "-o", out}), {"INPUT", "--random"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"convert", "x.bin", "--seed", "3", "-o", out}), {"--seed", "--random"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"convert", "--random", "15M", "--seed", "-3", "-o", out}), {"--seed"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"convert", "--random", "15M", "--tokenizer", "t.model", "-o", out}),
                           {"--tokenizer"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"convert", "--random", "15M", "--type", "iq4_nl", "-o", out}), {"iq4_nl", "q4_k_m"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"convert", "--random", "15M"}), {"-o"}));
  EXPECT_FALSE(PathExists(out));
}

TEST(cli_usage_error, UnknownFlagForEverySubcommand) {
  for (const char* command : {"generate", "tokenize", "info", "logits"}) {
    EXPECT_TRUE(FailsCleanly(RunToyllm({command, "--no-such-flag"}), {"--no-such-flag"}, {"unknown"})) << command;
  }
}

TEST(cli_usage_error, UnknownSubcommand) {
  EXPECT_TRUE(FailsCleanly(RunToyllm({"frobnicate", "-m", "x"}), {"frobnicate"}, {"unknown", "command"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"--verbose"}), {"--verbose"}, {"unknown", "command"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({""}), {}, {"unknown", "command"}));
}

TEST(cli_usage_error, NoSubcommandPrintsUsageToStderr) {
  const RunResult r = RunToyllm({});
  ASSERT_TRUE(r.exited) << Describe(r);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(r.err, "usage")) << r.err;
}

// generate, attention, explain, lens, logits, info and tokenize run the default model
// without -m (see coref_model_test); an empty -m is still no model.
TEST(cli_usage_error, RequiredInputsMissing) {
  EXPECT_TRUE(FailsCleanly(RunToyllm({"generate", "-m", ""}), {"-m"}, {"model"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"info", "-m", ""}), {"-m"}, {"model"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"logits", "-m", "", "-o", TempDir() + "/x.npy"}), {"-m"}, {"model"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"tokenize", "-m", "", "-p", "hi"}), {}, {"tokenizer"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"tokenize", "--ids=yes"}), {"--ids"}, {"value"}));
}

TEST(cli_usage_error, LogitsWithoutOutput) {
  const std::string model = Stories260K(), tok = Tok512();
  TOYLLM_REQUIRE_FILE(model);
  TOYLLM_REQUIRE_FILE(tok);
  EXPECT_TRUE(FailsCleanly(RunToyllm({"logits", "-m", model, "--tokenizer", tok, "-p", "Once"}), {"-o"}, {"output"}));
  EXPECT_TRUE(FailsCleanly(RunToyllm({"logits", "-m", model, "--tokenizer", tok, "-o"}), {"--output"}, {"value"}));
}

TEST(cli_usage_error, LogitsIntoANonexistentDirectoryLeavesNoFile) {
  const std::string model = Stories260K(), tok = Tok512();
  TOYLLM_REQUIRE_FILE(model);
  TOYLLM_REQUIRE_FILE(tok);
  const std::string dir = TempDir();
  const std::string output = dir + "/no/such/dir/logits.npy";
  EXPECT_TRUE(FailsCleanly(RunToyllm({"logits", "-m", model, "--tokenizer", tok, "-p", "Once", "-o", output}), {output},
                           {"no such file", "cannot create", "directory"}));
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{});

  // An existing directory as the output: nothing replaces it and no temporary file stays.
  const std::string target = dir + "/a_directory";
  ASSERT_EQ(mkdir(target.c_str(), 0755), 0);
  EXPECT_TRUE(FailsCleanly(RunToyllm({"logits", "-m", model, "--tokenizer", tok, "-p", "Once", "-o", target}), {target},
                           {"directory", "cannot"}));
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"a_directory"});
  EXPECT_EQ(ListDir(target), std::vector<std::string>{});

  // A prompt that does not fit: no file either.
  const std::string npy = dir + "/long.npy";
  EXPECT_TRUE(FailsCleanly(RunToyllm({"logits", "-m", model, "--tokenizer", tok, "-c", "8", "-p", kLongPrompt, "-o", npy}),
                           {"8"}, {"context"}));
  EXPECT_FALSE(PathExists(npy));
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"a_directory"});
}

// ---------------------------------------------------------------------------------------
// Help.

TEST(cli_help, TopLevelHelpListsTheSubcommands) {
  for (const char* flag : {"--help", "-h", "help"}) {
    const RunResult r = RunToyllm({flag});
    ASSERT_TRUE(Succeeds(r)) << flag;
    EXPECT_EQ(r.err, "");
    for (const char* command : {"generate", "tokenize", "info", "logits"}) {
      EXPECT_TRUE(Contains(r.out, command)) << flag << " does not list " << command << ":\n" << r.out;
    }
  }
}

// The subcommands `toyllm --help` lists: the indented first word of each line after
// "commands:".
std::vector<std::string> ListedSubcommands() {
  const RunResult r = RunToyllm({"--help"});
  std::vector<std::string> commands;
  std::istringstream lines(r.out);
  std::string line;
  bool in_list = false;
  while (std::getline(lines, line)) {
    if (Contains(line, "commands:")) {
      in_list = true;
      continue;
    }
    std::smatch m;
    if (in_list && std::regex_search(line, m, std::regex("^\\s+([a-z][a-z0-9_-]*)"))) {
      commands.push_back(m[1]);
    }
  }
  return commands;
}

TEST(cli_help, EverySubcommandHasHelpOnStdout) {
  std::vector<std::string> commands = ListedSubcommands();
  for (const char* required : {"generate", "tokenize", "info", "logits"}) {
    EXPECT_NE(std::find(commands.begin(), commands.end(), required), commands.end()) << required;
  }
  for (const std::string& command : commands) {
    for (const char* flag : {"--help", "-h"}) {
      const RunResult r = RunToyllm({command, flag});
      EXPECT_TRUE(Succeeds(r)) << command << " " << flag;
      EXPECT_EQ(r.err, "") << command << " " << flag;
      EXPECT_EQ(r.out.rfind("usage: toyllm " + command, 0), 0u) << command << " " << flag << ":\n" << r.out;
      EXPECT_TRUE(Contains(r.out, "--help")) << command;
    }
  }
  // --help wins over other (even bad) arguments.
  const RunResult r = RunToyllm({"generate", "--temp", "-1", "--help"});
  EXPECT_TRUE(Succeeds(r));
  EXPECT_TRUE(Contains(r.out, "usage: toyllm generate")) << r.out;
}

TEST(cli_help, GenerateHelpNamesItsFlags) {
  const RunResult r = RunToyllm({"generate", "--help"});
  ASSERT_TRUE(Succeeds(r));
  for (const char* flag : {"--model", "--tokenizer", "--prompt", "--threads", "--ctx-size", "--n-predict", "--temp",
                           "--top-k", "--top-p", "--seed"}) {
    EXPECT_TRUE(Contains(r.out, flag)) << flag << " missing from:\n" << r.out;
  }
}

// ---------------------------------------------------------------------------------------
// Working commands.

struct TokenLine {
  int id;
  std::string piece;
};

std::vector<TokenLine> ParseTokenLines(const std::string& out) {
  std::vector<TokenLine> tokens;
  std::istringstream lines(out);
  std::string line;
  const std::regex pattern("^(\\d+) -> '(.*)'$");
  while (std::getline(lines, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, pattern)) {
      ADD_FAILURE() << "unexpected tokenize line: " << line;
      continue;
    }
    tokens.push_back({std::stoi(m[1]), m[2]});
  }
  return tokens;
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

TEST(cli_tokenize, PrintsBosThenThePieces) {
  const std::string tok = Tok512();
  TOYLLM_REQUIRE_FILE(tok);
  const RunResult r = RunToyllm({"tokenize", "--tokenizer", tok, "-p", "Once upon a time"});
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r.err, "");
  const std::vector<TokenLine> tokens = ParseTokenLines(r.out);
  ASSERT_EQ(tokens.size(), 5u) << r.out;  // BOS + 4 words, as llama2.c counts ("prompt tokens: 5")
  EXPECT_EQ(tokens[0].id, 1);
  EXPECT_EQ(tokens[0].piece, "<s>");
  // The pieces, with SentencePiece's U+2581 for spaces, spell the text with a dummy prefix.
  std::string text;
  for (size_t i = 1; i < tokens.size(); ++i) {
    EXPECT_GT(tokens[i].id, 2) << "a control id inside the text";
    EXPECT_LT(tokens[i].id, 512);
    text += tokens[i].piece;
  }
  EXPECT_EQ(ReplaceAll(text, "\u2581", " "), " Once upon a time");

  // --ids prints the same ids on one line.
  const RunResult ids = RunToyllm({"tokenize", "--tokenizer", tok, "-p", "Once upon a time", "--ids"});
  ASSERT_TRUE(Succeeds(ids));
  std::string expected;
  for (const TokenLine& t : tokens) expected += (expected.empty() ? "" : " ") + std::to_string(t.id);
  EXPECT_EQ(ids.out, expected + "\n");

  // The tokenizer found beside the model gives the same tokens.
  const std::string model = Stories260K();
  TOYLLM_REQUIRE_FILE(model);
  const RunResult beside = RunToyllm({"tokenize", "-m", model, "-p", "Once upon a time"});
  ASSERT_TRUE(Succeeds(beside));
  EXPECT_EQ(beside.out, r.out);
}

TEST(cli_tokenize, EmptyPromptIsBosAlone) {
  const std::string tok = Tok512();
  TOYLLM_REQUIRE_FILE(tok);
  const RunResult r = RunToyllm({"tokenize", "--tokenizer", tok, "--ids"});
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r.out, "1\n");
}

// Parses "key: value" lines.
std::map<std::string, std::string> ParseInfo(const std::string& out) {
  std::map<std::string, std::string> fields;
  std::istringstream lines(out);
  std::string line;
  const std::regex pattern("^([a-z_]+):\\s+(.*)$");
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_match(line, m, pattern)) fields[m[1]] = m[2];
  }
  return fields;
}

// The leading integer of a field ("4 (grouped-query, ...)" -> 4), or -1.
long long LeadingInt(const std::string& value) {
  std::smatch m;
  if (!std::regex_search(value, m, std::regex("^(\\d+)"))) return -1;
  return std::stoll(m[1]);
}

TEST(cli_info, PrintsTheDimensions) {
  const std::string model = Stories260K();
  TOYLLM_REQUIRE_FILE(model);
  const RunResult r = RunToyllm({"info", "-m", model});
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r.err, "");
  std::map<std::string, std::string> info = ParseInfo(r.out);
  EXPECT_EQ(LeadingInt(info["dim"]), 64) << r.out;
  EXPECT_EQ(LeadingInt(info["hidden_dim"]), 172) << r.out;
  EXPECT_EQ(LeadingInt(info["layers"]), 5) << r.out;
  EXPECT_EQ(LeadingInt(info["heads"]), 8) << r.out;
  EXPECT_EQ(LeadingInt(info["kv_heads"]), 4) << r.out;
  EXPECT_EQ(LeadingInt(info["head_dim"]), 8) << r.out;
  EXPECT_EQ(LeadingInt(info["vocab_size"]), 512) << r.out;
  EXPECT_EQ(LeadingInt(info["context_length"]), 512) << r.out;
  struct stat st;
  ASSERT_EQ(stat(model.c_str(), &st), 0);
  EXPECT_EQ(LeadingInt(info["file_bytes"]), st.st_size) << r.out;
  // 512·64 embedding (shared with the output) + 5 layers of norms, attention and
  // feed-forward + the final norm: llama2.c's doc/stories260K.md says "260K".
  const long long per_layer = 2 * 64 + 64 * 64 * 2 + 64 * 32 * 2 + 64 * 172 * 3;
  EXPECT_EQ(LeadingInt(info["parameters"]), 512 * 64 + 5 * per_layer + 64) << r.out;
}

// A parsed .npy file of float32.
struct Npy {
  int major = 0, minor = 0;
  size_t header_length = 0;
  std::string header;
  std::vector<long long> shape;
  std::vector<float> data;
};

::testing::AssertionResult ParseNpy(const std::string& bytes, Npy* npy) {
  if (bytes.size() < 10) return ::testing::AssertionFailure() << "only " << bytes.size() << " bytes";
  if (bytes.compare(0, 6, "\x93NUMPY") != 0) return ::testing::AssertionFailure() << "bad magic";
  npy->major = static_cast<unsigned char>(bytes[6]);
  npy->minor = static_cast<unsigned char>(bytes[7]);
  npy->header_length = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  if (10 + npy->header_length > bytes.size()) return ::testing::AssertionFailure() << "header past the end";
  npy->header = bytes.substr(10, npy->header_length);
  std::smatch m;
  if (!std::regex_search(npy->header, m, std::regex("'shape': \\(([0-9, ]*)\\)"))) {
    return ::testing::AssertionFailure() << "no shape in " << npy->header;
  }
  const std::string dims = m[1];
  const std::regex number("\\d+");
  for (std::sregex_iterator it(dims.begin(), dims.end(), number), end; it != end; ++it) {
    npy->shape.push_back(std::stoll(it->str()));
  }
  const size_t data_bytes = bytes.size() - 10 - npy->header_length;
  npy->data.resize(data_bytes / sizeof(float));
  std::memcpy(npy->data.data(), bytes.data() + 10 + npy->header_length, npy->data.size() * sizeof(float));
  return ::testing::AssertionSuccess();
}

// The .npy format 1.0 as NumPy writes and reads it: magic, version, a little-endian uint16
// header length, an ASCII dict padded with spaces and ending in '\n' so that the data
// starts at a multiple of 64 bytes.
void ExpectValidLogitsNpy(const std::string& path, long long rows, Npy* npy) {
  const std::string bytes = ReadFile(path);
  ASSERT_TRUE(ParseNpy(bytes, npy));
  EXPECT_EQ(npy->major, 1);
  EXPECT_EQ(npy->minor, 0);
  EXPECT_EQ((10 + npy->header_length) % 64, 0u) << "data not 64-byte aligned";
  ASSERT_FALSE(npy->header.empty());
  EXPECT_EQ(npy->header.back(), '\n');
  EXPECT_EQ(npy->header.front(), '{');
  EXPECT_TRUE(Contains(npy->header, "'descr': '<f4'")) << npy->header;
  EXPECT_TRUE(Contains(npy->header, "'fortran_order': False")) << npy->header;
  std::string trimmed = npy->header;
  while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\n')) trimmed.pop_back();
  EXPECT_TRUE(!trimmed.empty() && trimmed.back() == '}') << npy->header;
  for (char c : npy->header) EXPECT_TRUE(c >= 0x20 || c == '\n') << "non-ASCII header byte";
  EXPECT_EQ(npy->shape, (std::vector<long long>{rows, 512})) << npy->header;
  EXPECT_EQ(bytes.size(), 10 + npy->header_length + static_cast<size_t>(rows) * 512 * sizeof(float));
  for (float v : npy->data) ASSERT_TRUE(std::isfinite(v));
}

TEST(cli_logits, WritesAValidNpy) {
  const std::string model = Stories260K(), tok = Tok512();
  TOYLLM_REQUIRE_FILE(model);
  TOYLLM_REQUIRE_FILE(tok);
  const std::string dir = TempDir();
  const std::string path = dir + "/logits.npy";
  const std::string prompt = "Once upon a time";
  const RunResult r = RunToyllm({"logits", "-m", model, "--tokenizer", tok, "-p", prompt, "-o", path});
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"logits.npy"}) << "a temporary file was left behind";
  Npy npy;
  ExpectValidLogitsNpy(path, 5, &npy);
  ASSERT_EQ(npy.data.size(), 5u * 512);

  // The last row predicts what greedy generation emits next: generate -n 1 prints the
  // prompt followed by the decoding of that row's argmax.
  const float* last = &npy.data[4 * 512];
  const int next = static_cast<int>(std::max_element(last, last + 512) - last);
  auto tokenizer = LoadSentencePieceFile(tok);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  std::vector<int> ids = (*tokenizer)->Encode(prompt, /*add_bos=*/true);
  ASSERT_EQ(ids.size(), 5u);
  ids.push_back(next);
  const RunResult one = RunToyllm({"generate", "-m", model, "--tokenizer", tok, "-p", prompt, "--temp", "0", "-n", "1"});
  ASSERT_TRUE(Succeeds(one));
  EXPECT_EQ(one.out, (*tokenizer)->Decode(ids) + "\n");

  // The rows differ: each position sees a different prefix.
  EXPECT_NE(std::vector<float>(npy.data.begin(), npy.data.begin() + 512),
            std::vector<float>(npy.data.begin() + 512, npy.data.begin() + 1024));

  // Overwriting an existing file works and gives the same bytes.
  const std::string first = ReadFile(path);
  ASSERT_TRUE(Succeeds(RunToyllm({"logits", "-m", model, "--tokenizer", tok, "-p", prompt, "-o", path})));
  EXPECT_EQ(ReadFile(path), first);
}

TEST(cli_logits, EmptyPromptIsOneRow) {
  const std::string model = Stories260K(), tok = Tok512();
  TOYLLM_REQUIRE_FILE(model);
  TOYLLM_REQUIRE_FILE(tok);
  const std::string path = TempDir() + "/bos.npy";
  ASSERT_TRUE(Succeeds(RunToyllm({"logits", "-m", model, "--tokenizer", tok, "-o", path})));
  Npy npy;
  ExpectValidLogitsNpy(path, 1, &npy);
}

class cli_generate : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = Stories260K();
    tok_ = Tok512();
    TOYLLM_REQUIRE_FILE(model_);
    TOYLLM_REQUIRE_FILE(tok_);
  }
  std::vector<std::string> Args(std::vector<std::string> extra) const {
    std::vector<std::string> args = {"generate", "-m", model_, "--tokenizer", tok_};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  std::string model_, tok_;
};

// llama2.c's `run -t 0.0 -n 256 -i "Once upon a time"`: -n counts positions including the
// 5 prompt tokens, so 252 new tokens; its stdout is the prompt and the continuation.
TEST_F(cli_generate, GreedyMatchesLlama2cByteForByte) {
  const std::string golden_path = GoldenPath("greedy_once.txt");
  TOYLLM_REQUIRE_FILE(golden_path);
  const std::string golden = ReadFile(golden_path);
  ASSERT_FALSE(golden.empty());
  const RunResult r = RunToyllm(Args({"--temp", "0", "-p", "Once upon a time", "-n", "252"}));
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r.out, golden);
  EXPECT_TRUE(Contains(r.err, "prompt tokens: 5")) << r.err;
  EXPECT_FALSE(Contains(r.err, "seed:")) << "greedy decoding uses no seed";

  // The same with --flag=value spellings and the tokenizer found beside the model.
  const RunResult again = RunToyllm({"generate", "--model=" + model_, "--temp=0", "--prompt=Once upon a time",
                               "--n-predict=252", "-t", "1"});
  ASSERT_TRUE(Succeeds(again));
  EXPECT_EQ(again.out, golden);
}

// llama2.c's `run -t 1.0 -p 0.9 -s 133742 -n 256` with no prompt: BOS alone, 256 new tokens.
TEST_F(cli_generate, SamplingMatchesLlama2cByteForByte) {
  const std::string golden_path = GoldenPath("sample_t1_p09_s133742.txt");
  TOYLLM_REQUIRE_FILE(golden_path);
  const RunResult r = RunToyllm(Args({"--temp", "1.0", "--top-p", "0.9", "--seed", "133742", "-n", "256"}));
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r.out, ReadFile(golden_path));
  EXPECT_TRUE(Contains(r.err, "seed: 133742")) << r.err;
  EXPECT_TRUE(Contains(r.err, "prompt tokens: 1")) << r.err;
}

TEST_F(cli_generate, SameSeedSameTextOtherSeedOtherText) {
  const RunResult a = RunToyllm(Args({"--seed", "7", "-n", "40", "-p", "Once upon a time"}));
  const RunResult b = RunToyllm(Args({"--seed", "7", "-n", "40", "-p", "Once upon a time"}));
  const RunResult c = RunToyllm(Args({"--seed", "8", "-n", "40", "-p", "Once upon a time"}));
  ASSERT_TRUE(Succeeds(a));
  ASSERT_TRUE(Succeeds(b));
  ASSERT_TRUE(Succeeds(c));
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  EXPECT_EQ(a.out.rfind("Once upon a time", 0), 0u) << a.out;
}

TEST_F(cli_generate, ZeroNewTokensPrintsJustThePrompt) {
  const RunResult r = RunToyllm(Args({"--temp", "0", "-p", "Once upon a time", "-n", "0"}));
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r.out, "Once upon a time\n");
  EXPECT_TRUE(Contains(r.err, "prompt tokens: 5")) << r.err;
}

TEST_F(cli_generate, PromptArrivesVerbatimWithoutAShell) {
  // Quotes, $, backquotes, ; and newlines would all be mangled by a shell.
  const std::string prompt = "Tom's \"big\" dog; $HOME `ls` & *\nthe end";
  const RunResult r = RunToyllm(Args({"--temp", "0", "-p", prompt, "-n", "0"}));
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r.out, prompt + "\n");
}

TEST_F(cli_generate, UntilTheContextEnds) {
  // -n -1 stops at the end of a 16-position context: BOS and 15 fed-back tokens, plus the
  // token predicted at the last position; the same text as asking for 16 tokens.
  const RunResult until_end = RunToyllm(Args({"--temp", "0", "-n", "-1", "-c", "16"}));
  const RunResult sixteen = RunToyllm(Args({"--temp", "0", "-n", "16"}));
  ASSERT_TRUE(Succeeds(until_end));
  ASSERT_TRUE(Succeeds(sixteen));
  EXPECT_EQ(until_end.out, sixteen.out);
  EXPECT_TRUE(Contains(until_end.err, "(16 tokens)")) << until_end.err;
}

TEST_F(cli_generate, ContextBeyondTheTrainedLengthWarnsButRuns) {
  const RunResult r = RunToyllm(Args({"--temp", "0", "-n", "3", "-c", "1024"}));
  ASSERT_TRUE(Succeeds(r));
  EXPECT_TRUE(Contains(r.err, "warning")) << r.err;
}

}  // namespace
}  // namespace toyllm
