// toyllm reproduces llama2.c run.c on stories260K byte for byte: greedy with and without a
// prompt, and seeded top-p sampling (shared/golden/stories260K, made with run.c itself).
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_env.h"
#include "toyllm.h"

namespace toyllm {
namespace {

struct GoldenCase {
  const char* file;
  const char* prompt;
  SamplerOptions sampling;
};

// run.c's "-n 256" counts positions including the prompt; run.c prints the text of every
// token after BOS and a final newline.
std::string RunLikeRunC(const GoldenCase& golden) {
  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(testing::Stories260K());
  EXPECT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadSentencePieceFile(testing::Tok512());
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  if (!model.ok() || !tokenizer.ok()) return "";
  const ModelConfig& config = (*model)->config;
  absl::StatusOr<std::unique_ptr<Transformer>> transformer =
      Transformer::Create(config, (*model)->weights, config.context_length);
  EXPECT_TRUE(transformer.ok()) << transformer.status();
  if (!transformer.ok()) return "";

  std::vector<int> ids = (*tokenizer)->Encode(golden.prompt, /*add_bos=*/true);
  GenerateOptions options;
  options.n_predict = 256 - (static_cast<int>(ids.size()) - 1);
  options.stop_tokens = {(*tokenizer)->bos_id(), (*tokenizer)->eos_id()};
  Sampler sampler(golden.sampling);
  absl::StatusOr<GenerateStats> stats = Generate(**transformer, sampler, ids, options,
                                                 [&ids](int id) { ids.push_back(id); });
  EXPECT_TRUE(stats.ok()) << stats.status();
  return (*tokenizer)->Decode(ids) + "\n";
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, MatchesLlama2cRunC) {
  const std::string model = testing::Stories260K();
  const std::string tokenizer = testing::Tok512();
  TOYLLM_REQUIRE_FILE(model);
  TOYLLM_REQUIRE_FILE(tokenizer);
  const std::string expected = testing::ReadFile(testing::GoldenDir() + "/stories260K/" + GetParam().file);
  ASSERT_FALSE(expected.empty()) << "golden file missing: " << GetParam().file;
  EXPECT_EQ(RunLikeRunC(GetParam()), expected);
}

INSTANTIATE_TEST_SUITE_P(
    Stories260K, GoldenTest,
    ::testing::Values(
        GoldenCase{"greedy_noprompt.txt", "", {.temperature = 0.0f}},
        GoldenCase{"greedy_once.txt", "Once upon a time", {.temperature = 0.0f}},
        GoldenCase{"sample_t1_p09_s133742.txt", "",
                   {.temperature = 1.0f, .top_p = 0.9f, .seed = 133742}}),
    [](const ::testing::TestParamInfo<GoldenCase>& info) {
      std::string name = info.param.file;
      return name.substr(0, name.find('.'));
    });

}  // namespace
}  // namespace toyllm
