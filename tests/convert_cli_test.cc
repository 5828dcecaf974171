// `toyllm convert`, run as a subprocess the way a user runs it: a llama2.c checkpoint
// becomes a GGUF file that `toyllm info` describes and `toyllm generate` runs without a
// tokenizer file (it is inside), reproducing llama2.c's greedy text byte for byte. Bad
// invocations fail with one line on stderr and leave no file behind.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/model_file.h"
#include "tests/test_env.h"
#include "tests/test_util.h"

namespace toyllm {
namespace {

using ::toyllm::testing::ReadFile;
using ::toyllm::testing::RunResult;

// Each run of toyllm is killed (and fails the test) after a minute.
constexpr std::chrono::seconds kTimeout(60);

// A clean failure: exit 1, nothing on stdout, one line on stderr starting "toyllm convert:"
// and containing every phrase.
::testing::AssertionResult FailedCleanly(const RunResult& r, const std::vector<std::string>& phrases) {
  auto fail = [&r](const std::string& why) {
    return ::testing::AssertionFailure() << why << "\n" << testing::Describe(r);
  };
  if (r.signal != 0) return fail("killed by a signal");
  if (r.exit_code != 1) return fail("exit code is not 1");
  if (!r.out.empty()) return fail("wrote to stdout");
  if (std::count(r.err.begin(), r.err.end(), '\n') != 1 || r.err.back() != '\n') {
    return fail("stderr is not one line");
  }
  if (r.err.rfind("toyllm convert: ", 0) != 0) return fail("stderr does not start with 'toyllm convert: '");
  for (const std::string& p : phrases) {
    if (r.err.find(p) == std::string::npos) return fail("stderr does not contain '" + p + "'");
  }
  return ::testing::AssertionSuccess();
}

class convert_cli : public ::testing::Test {
 protected:
  void SetUp() override {
    bin_ = testing::Stories260K();
    tok_ = testing::Tok512();
    TOYLLM_REQUIRE_FILE(bin_);
    TOYLLM_REQUIRE_FILE(tok_);
    golden_ = ReadFile(testing::GoldenDir() + "/stories260K/greedy_once.txt");
    ASSERT_FALSE(golden_.empty()) << "golden file missing";
    dir_ = testing::TempDir();
  }
  void TearDown() override { testing::RemoveTempDir(dir_); }

  RunResult Convert(const std::vector<std::string>& args) {
    std::vector<std::string> full = {"convert"};
    full.insert(full.end(), args.begin(), args.end());
    return testing::RunToyllm(full, kTimeout);
  }
  RunResult Greedy(const std::string& model) {
    return testing::RunToyllm({"generate", "-m", model, "--temp", "0", "-n", "252", "-p", "Once upon a time"},
                              kTimeout);
  }

  std::string bin_, tok_, golden_, dir_;
};

TEST_F(convert_cli, Llama2cToGgufRunsLikeRunC) {
  const std::string gguf = dir_ + "/X.gguf";
  const RunResult convert = Convert({bin_, "--tokenizer", tok_, "-o", gguf});
  ASSERT_TRUE(testing::Succeeds(convert));
  EXPECT_TRUE(convert.out.empty()) << convert.out;
  EXPECT_NE(convert.err.find("wrote " + gguf + " (f32)"), std::string::npos) << convert.err;
  ASSERT_TRUE(testing::PathExists(gguf));
  EXPECT_EQ(testing::ListDir(dir_), std::vector<std::string>{"X.gguf"}) << "no temporary file may remain";
  // 1 MiB of f32 weights, plus metadata and the tokenizer.
  EXPECT_GT(std::filesystem::file_size(gguf), 1'040'000u);
  EXPECT_EQ(ReadFile(gguf).substr(0, 4), "GGUF");

  const RunResult info = testing::RunToyllm({"info", "-m", gguf}, kTimeout);
  ASSERT_TRUE(testing::Succeeds(info));
  for (const char* expected :
       {"format:          GGUF v3 (llama)", "dim:             64", "layers:          5",
        "kv_heads:        4", "vocab_size:      512", "context_length:  512", "tied_output:     yes",
        "metadata:", "general.architecture", "\"llama\"", "general.name", "\"stories260K.bin\"",
        "llama.context_length", "llama.attention.head_count_kv", "tokenizer.ggml.tokens",
        "array of 512", "tensors:", "token_embd.weight", "blk.0.attn_q.weight", "blk.4.ffn_down.weight",
        "output_norm.weight", "[64, 512]", "[172, 64]"}) {
    EXPECT_NE(info.out.find(expected), std::string::npos) << expected << "\n" << info.out;
  }
  EXPECT_EQ(info.out.find("  output.weight "), std::string::npos) << "tied: no output.weight";
  EXPECT_NE(info.out.find("  blk.4.attn_output.weight "), std::string::npos);
  EXPECT_EQ(info.out.find("q8_0"), std::string::npos);

  // No --tokenizer, and none beside X.gguf: the one inside is used.
  const RunResult generate = Greedy(gguf);
  ASSERT_TRUE(testing::Succeeds(generate));
  EXPECT_EQ(generate.out, golden_);
}

TEST_F(convert_cli, Q8_0AndF16) {
  // Measured: f16 reproduces llama2.c's greedy text completely; q8_0 follows it for the
  // first 295 bytes, then its rounding picks another word.
  for (const char* type : {"q8_0", "f16"}) {
    SCOPED_TRACE(type);
    const std::string gguf = dir_ + "/" + type + ".gguf";
    ASSERT_TRUE(testing::Succeeds(Convert({"--type", type, bin_, "-o", gguf, "--tokenizer", tok_})));
    const RunResult info = testing::RunToyllm({"info", "-m", gguf}, kTimeout);
    ASSERT_TRUE(testing::Succeeds(info));
    const auto line_of = [&info](const std::string& tensor) {
      const size_t at = info.out.find("  " + tensor + " ");
      return at == std::string::npos ? std::string() : info.out.substr(at, info.out.find('\n', at) - at);
    };
    EXPECT_NE(line_of("token_embd.weight").find(type), std::string::npos) << line_of("token_embd.weight");
    EXPECT_NE(line_of("blk.2.attn_k.weight").find(type), std::string::npos);
    // Rows of 172 are not whole q8_0 blocks: w2 stays f16.
    EXPECT_NE(line_of("blk.2.ffn_down.weight").find("f16"), std::string::npos) << line_of("blk.2.ffn_down.weight");
    EXPECT_NE(line_of("blk.2.ffn_norm.weight").find("f32"), std::string::npos);
    const RunResult generate = Greedy(gguf);
    ASSERT_TRUE(testing::Succeeds(generate));
    EXPECT_EQ(generate.out.substr(0, 280), golden_.substr(0, 280));
    if (std::string(type) == "f16") {
      EXPECT_EQ(generate.out, golden_);
    }
    // Smaller than f32 (1.06 MB): q8_0 about 0.3 MB plus f16 w2, f16 about half.
    EXPECT_LT(std::filesystem::file_size(gguf), 600'000u);
  }
}

// llama-quantize's presets on stories260K: its rows of 64 and 172 are no whole 256-blocks,
// so the K-quant presets take llama.cpp's fallbacks (Q4_K -> Q5_0, Q6_K -> Q8_0, f16 for
// 172); the generated text follows llama2.c's for a measured prefix.
TEST_F(convert_cli, QuantizationPresets) {
  struct Case {
    const char* preset;
    const char* types;  // info's tensor_types line
    size_t same_bytes;  // measured, less a margin
  };
  // Measured here (AVX2): the first 87, 200 and 295 bytes agree. The tied embedding is the
  // output: q8_0, as llama-quantize stores an output whose rows are not 256-blocks.
  for (const Case& c : {Case{"q4_0", "q8_0 x1, f32 x11, q4_0 x30, f16 x5", 60},
                        Case{"q4_k_m", "q8_0 x3, f32 x11, q5_0 x28, f16 x5", 150},
                        Case{"q6_k", "q8_0 x31, f32 x11, f16 x5", 250}}) {
    SCOPED_TRACE(c.preset);
    const std::string gguf = dir_ + "/" + c.preset + ".gguf";
    ASSERT_TRUE(testing::Succeeds(Convert({"--type", c.preset, bin_, "-o", gguf, "--tokenizer", tok_})));
    const RunResult info = testing::RunToyllm({"info", "-m", gguf}, kTimeout);
    ASSERT_TRUE(testing::Succeeds(info));
    EXPECT_NE(info.out.find(std::string("tensor_types:    ") + c.types + "\n"), std::string::npos) << info.out;
    const RunResult generate = Greedy(gguf);
    ASSERT_TRUE(testing::Succeeds(generate));
    size_t same = 0;
    while (same < generate.out.size() && same < golden_.size() && generate.out[same] == golden_[same]) ++same;
    std::cerr << c.preset << ": the first " << same << " bytes as llama2.c's\n";
    EXPECT_GE(same, c.same_bytes);
  }
}

// The counts of types on a 110M-shaped file and a 15M one, whose 288-wide rows fall back.
TEST_F(convert_cli, InfoCountsTheTensorTypes) {
  const std::string gguf = dir_ + "/random.gguf";
  ASSERT_TRUE(testing::Succeeds(Convert({"--random", "15M", "--type", "q4_k_m", "-o", gguf})));
  const RunResult info = testing::RunToyllm({"info", "-m", gguf}, kTimeout);
  ASSERT_TRUE(testing::Succeeds(info));
  // token_embd and the 288-wide matrices q5_0, attn_v of layers 2 and 5 (use_more_bits)
  // and output q8_0; ffn_down (768 wide) q6_k in layers 2 and 5, q4_k elsewhere.
  EXPECT_NE(info.out.find("tensor_types:    q5_0 x35, f32 x13, q4_k x4, q8_0 x3, q6_k x2\n"), std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("general.file_type"), std::string::npos);
  EXPECT_NE(info.out.find("15"), std::string::npos);
  // No tokenizer: llama.cpp's "none", with the vocabulary's size, so that llama.cpp opens
  // the file as written (it refuses one without tokenizer.ggml.model).
  EXPECT_NE(info.out.find("tokenizer.ggml.model                       \"none\""), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("llama.vocab_size                           32000"), std::string::npos) << info.out;
}

TEST_F(convert_cli, GgufToGgufReproducesTheFile) {
  const std::string first = dir_ + "/first.gguf", second = dir_ + "/second.gguf";
  ASSERT_TRUE(testing::Succeeds(Convert({bin_, "--tokenizer", tok_, "-o", first})));
  ASSERT_TRUE(testing::Succeeds(Convert({first, "--name", "stories260K.bin", "-o", second})));
  EXPECT_EQ(ReadFile(second), ReadFile(first));
}

// A downloaded model's chat template travels with it through convert, requantized or not.
TEST_F(convert_cli, GgufToGgufKeepsTheChatTemplate) {
  const std::string zoo = testing::SharedPath("zoo", "models/qwen2-Q8_0.gguf");
  TOYLLM_REQUIRE_FILE(zoo);
  const std::string out = dir_ + "/qwen2-q4_0.gguf";
  ASSERT_TRUE(testing::Succeeds(Convert({zoo, "--type", "q4_0", "-o", out})));
  absl::StatusOr<std::unique_ptr<ModelFile>> original = LoadModel(zoo), converted = LoadModel(out);
  ASSERT_TRUE(original.ok() && converted.ok());
  ASSERT_FALSE((*original)->chat_template.empty());
  EXPECT_EQ((*converted)->chat_template, (*original)->chat_template);
}

TEST_F(convert_cli, BadInvocationsFailCleanlyAndWriteNothing) {
  const std::string out = dir_ + "/X.gguf";
  const auto nothing_written = [this] {
    for (const std::string& name : testing::ListDir(dir_)) {
      ADD_FAILURE() << "left behind: " << name;
    }
  };
  EXPECT_TRUE(FailedCleanly(Convert({bin_, "--tokenizer", tok_, "--type", "q4", "-o", out}),
                            {"--type", "'q4' is not one of f32, f16, bf16, q4_0"}));
  nothing_written();
  EXPECT_TRUE(FailedCleanly(Convert({"-o", out}), {"give exactly one INPUT model"}));
  nothing_written();
  EXPECT_TRUE(FailedCleanly(Convert({bin_, bin_, "-o", out}), {"give exactly one INPUT model"}));
  nothing_written();
  EXPECT_TRUE(FailedCleanly(Convert({bin_, "--tokenizer", tok_}), {"no output file given (-o FILE.gguf)"}));
  nothing_written();
  EXPECT_TRUE(FailedCleanly(Convert({dir_ + "/no_such.bin", "-o", out}), {dir_ + "/no_such.bin", "cannot open"}));
  nothing_written();
  EXPECT_TRUE(FailedCleanly(Convert({bin_, "--tokenizer", dir_ + "/no_such.model", "-o", out}),
                            {dir_ + "/no_such.model"}));
  nothing_written();
  EXPECT_TRUE(FailedCleanly(Convert({bin_, "--tokenizer", tok_, "--bogus", "-o", out}),
                            {"unknown flag '--bogus'"}));
  nothing_written();

  // Into a directory that does not exist: nothing is created, neither the file nor the
  // directory nor a temporary file.
  const std::string missing_dir = dir_ + "/no/such/dir";
  const std::string target = missing_dir + "/X.gguf";
  EXPECT_TRUE(FailedCleanly(Convert({bin_, "--tokenizer", tok_, "-o", target}), {target, "cannot create"}));
  EXPECT_FALSE(testing::PathExists(dir_ + "/no"));
  nothing_written();

  // Into a directory that exists but cannot be written (unless running as root).
  const std::string locked = dir_ + "/locked";
  ASSERT_EQ(mkdir(locked.c_str(), 0555), 0);
  if (access(locked.c_str(), W_OK) != 0) {
    EXPECT_TRUE(FailedCleanly(Convert({bin_, "--tokenizer", tok_, "-o", locked + "/X.gguf"}),
                              {locked + "/X.gguf", "cannot create"}));
    EXPECT_TRUE(testing::ListDir(locked).empty());
  }
  rmdir(locked.c_str());

  // A model without a tokenizer beside it and none given.
  const std::string lonely = dir_ + "/lonely";
  ASSERT_EQ(mkdir(lonely.c_str(), 0755), 0);
  std::filesystem::copy_file(bin_, lonely + "/model.bin");
  EXPECT_TRUE(FailedCleanly(Convert({lonely + "/model.bin", "-o", lonely + "/model.gguf"}),
                            {lonely + "/model.bin", "no --tokenizer given"}));
  EXPECT_EQ(testing::ListDir(lonely), std::vector<std::string>{"model.bin"});
}

}  // namespace
}  // namespace toyllm
