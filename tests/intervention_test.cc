// Interventions (runtime/intervention.h): head ablation against an independent path (the
// same model with that head's slice of W_O zeroed), activation patching's two ends (nothing
// patched is the corrupted run, everything patched is the clean run), and the command
// line's answers to bad input.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/llama_gguf_export.h"
#include "models/model_file.h"
#include "models/random_llama.h"
#include "runtime/generate.h"
#include "runtime/transformer.h"
#include "tests/test_env.h"
#include "tests/test_util.h"
#include "tokenizer/load_tokenizer.h"
#include "tools/inspect/activation_patch.h"
#include "tools/inspect/head_ablation.h"

namespace toyllm {
namespace {

const std::string kCoref = std::string(TOYLLM_SOURCE_DIR) + "/models/coref.gguf";
const std::string kTired = "这个动物并没有过马路，因为它太累了。它指的是";
const std::string kWide = "这个动物并没有过马路，因为它太宽了。它指的是";

// Every position's logits of `ids` on `weights`, with `intervention` attached, in Forward
// calls of at most `max_batch` tokens.
std::vector<float> Logits(const ModelConfig& c, const ModelWeights& weights, const std::vector<int>& ids,
                          Intervention* intervention, int max_batch = Transformer::kDefaultMaxBatch) {
  absl::StatusOr<std::unique_ptr<Transformer>> t = Transformer::Create(c, weights, c.context_length, max_batch);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  (*t)->set_intervention(intervention);
  absl::StatusOr<std::vector<float>> logits = Prefill(**t, ids, 0, Transformer::Logits::kAll);
  EXPECT_TRUE(logits.ok()) << logits.status();
  return logits.ok() ? *logits : std::vector<float>{};
}

// A copy of the model's weights whose W_O of `layer` ignores head `head`: the columns that
// multiply its output are zero.
struct ZeroedHead {
  ModelWeights weights;
  std::vector<float> wo;
  ZeroedHead(const ModelFile& model, int layer, int head) : weights(model.weights) {
    const ModelConfig& c = model.config;
    const Matrix& original = model.weights.layers[layer].wo;
    EXPECT_EQ(original.type, WeightType::kF32);
    wo.assign(original.floats(), original.floats() + static_cast<size_t>(original.rows) * original.cols);
    for (int r = 0; r < original.rows; ++r) {
      for (int i = 0; i < c.head_dim; ++i) wo[static_cast<size_t>(r) * original.cols + head * c.head_dim + i] = 0;
    }
    weights.layers[layer].wo.data = wo.data();
  }
};

std::unique_ptr<ModelFile> Load(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *std::move(model) : nullptr;
}

// Grouped-query attention (2 query heads per key/value head), 3 layers: a random model.
std::string RandomGqaModel(const std::string& dir) {
  ModelConfig c;
  c.dim = 48;
  c.hidden_dim = 64;
  c.n_layers = 3;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = 12;
  c.vocab_size = 40;
  c.context_length = 24;
  const std::string path = dir + "/gqa.gguf";
  EXPECT_TRUE(WriteRandomLlamaGguf(path, c, 7, ExportOptions{}).ok());
  return path;
}

void ExpectAblationIsZeroedWo(const ModelFile& model, const std::vector<int>& ids) {
  const ModelConfig& c = model.config;
  for (int l = 0; l < c.n_layers; ++l) {
    for (int h = 0; h < c.n_heads; ++h) {
      HeadAblation ablation({{l, h}}, c.head_dim);
      const std::vector<float> ablated = Logits(c, model.weights, ids, &ablation);
      ZeroedHead zeroed(model, l, h);
      const std::vector<float> expected = Logits(c, zeroed.weights, ids, nullptr);
      const std::vector<float> intact = Logits(c, model.weights, ids, nullptr);
      // Exactly: a zero input and a zero weight give the same zero products.
      EXPECT_EQ(ablated, expected) << "layer " << l << " head " << h;
      // The head mattered: the comparison is not of two unchanged runs.
      EXPECT_GT(testing::MaxAbsDiff(ablated, intact), 1e-4f) << "layer " << l << " head " << h;
    }
  }
}

TEST(intervention, AblatingAHeadEqualsZeroingItsSliceOfWoOnTheCorefModel) {
  std::unique_ptr<ModelFile> model = Load(kCoref);
  ASSERT_NE(model, nullptr);
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadTokenizer(model->vocabulary, kCoref);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  ExpectAblationIsZeroedWo(*model, (*tokenizer)->Encode(kTired, true));
}

TEST(intervention, AblatingAHeadEqualsZeroingItsSliceOfWoWithGroupedQueries) {
  const std::string dir = testing::TempDir();
  std::unique_ptr<ModelFile> model = Load(RandomGqaModel(dir));
  ASSERT_NE(model, nullptr);
  ExpectAblationIsZeroedWo(*model, {1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 2, 4});
  testing::RemoveTempDir(dir);
}

TEST(intervention, AblatingAHeadEqualsZeroingItsSliceOfWoOnALlamaCppGguf) {
  const std::string path = testing::ModelPath("gguf/stories260K.llamacpp-f32.gguf");
  TOYLLM_REQUIRE_FILE(path);
  std::unique_ptr<ModelFile> model = Load(path);
  ASSERT_NE(model, nullptr);
  ExpectAblationIsZeroedWo(*model, testing::MixedTokens());
}

// The KV cache holds what the ablated heads left: a prompt fed one token at a time gives
// the logits of one batch.
TEST(intervention, AblationAndPatchingHoldAcrossForwardCalls) {
  std::unique_ptr<ModelFile> model = Load(kCoref);
  ASSERT_NE(model, nullptr);
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadTokenizer(model->vocabulary, kCoref);
  ASSERT_TRUE(tokenizer.ok());
  const ModelConfig& c = model->config;
  const std::vector<int> ids = (*tokenizer)->Encode(kTired, true);
  HeadAblation ablation({{1, 2}, {2, 0}}, c.head_dim);
  EXPECT_LE(testing::MaxAbsDiff(Logits(c, model->weights, ids, &ablation, 1),
                                Logits(c, model->weights, ids, &ablation)), 1e-5f);

  const std::vector<int> corrupt = (*tokenizer)->Encode(kWide, true);
  TapRecorder clean(ActivationPatch::CleanTaps(c.n_layers));
  absl::StatusOr<std::unique_ptr<Transformer>> t = Transformer::Create(c, model->weights, c.context_length);
  ASSERT_TRUE(t.ok());
  (*t)->set_observer(&clean);
  ASSERT_TRUE(Prefill(**t, ids, 0, Transformer::Logits::kLast).ok());
  ActivationPatch patch(clean, c.head_dim);
  patch.set_components({{PatchComponent::Kind::kHead, 1, 3}, {PatchComponent::Kind::kResidual, 0, 14},
                        {PatchComponent::Kind::kMlp, 2}});
  EXPECT_LE(testing::MaxAbsDiff(Logits(c, model->weights, corrupt, &patch, 3),
                                Logits(c, model->weights, corrupt, &patch)), 1e-5f);
}

class patching : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = Load(kCoref);
    ASSERT_NE(model_, nullptr);
    absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadTokenizer(model_->vocabulary, kCoref);
    ASSERT_TRUE(tokenizer.ok());
    tokenizer_ = *std::move(tokenizer);
    clean_ids_ = tokenizer_->Encode(kTired, true);
    corrupt_ids_ = tokenizer_->Encode(kWide, true);
    const ModelConfig& c = model_->config;
    absl::StatusOr<std::unique_ptr<Transformer>> t = Transformer::Create(c, model_->weights, c.context_length);
    ASSERT_TRUE(t.ok());
    clean_ = std::make_unique<TapRecorder>(ActivationPatch::CleanTaps(c.n_layers));
    (*t)->set_observer(clean_.get());
    ASSERT_TRUE(Prefill(**t, clean_ids_, 0, Transformer::Logits::kAll).ok());
  }
  std::unique_ptr<ModelFile> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::vector<int> clean_ids_, corrupt_ids_;
  std::unique_ptr<TapRecorder> clean_;
};

TEST_F(patching, PatchingNothingIsTheCorruptedRun) {
  const ModelConfig& c = model_->config;
  ActivationPatch patch(*clean_, c.head_dim);
  EXPECT_EQ(Logits(c, model_->weights, corrupt_ids_, &patch), Logits(c, model_->weights, corrupt_ids_, nullptr));
}

TEST_F(patching, PatchingEverythingIsTheCleanRun) {
  const ModelConfig& c = model_->config;
  ActivationPatch patch(*clean_, c.head_dim);
  patch.set_components(AllComponents(c, static_cast<int>(corrupt_ids_.size())));
  const std::vector<float> patched = Logits(c, model_->weights, corrupt_ids_, &patch);
  EXPECT_EQ(patched, Logits(c, model_->weights, clean_ids_, nullptr));
  EXPECT_NE(patched, Logits(c, model_->weights, corrupt_ids_, nullptr));
}

// Patching the residual stream leaving block 0 at the one position where the prompts
// differ ("累" / "宽") carries nearly everything the corrupted run lacks (not quite all:
// block 0's keys and values there still come from the corrupted token).
TEST_F(patching, TheDifferingPositionsResidualRestoresTheCleanMetric) {
  const ModelConfig& c = model_->config;
  absl::StatusOr<PatchMetric> metric = ParsePatchMetric("动物-马路", *tokenizer_);
  ASSERT_TRUE(metric.ok()) << metric.status();
  absl::StatusOr<std::unique_ptr<Transformer>> t = Transformer::Create(c, model_->weights, c.context_length);
  ASSERT_TRUE(t.ok());
  absl::StatusOr<PatchMap> map = PatchEachComponent(**t, clean_ids_, corrupt_ids_, *metric);
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_GT(map->clean, 0);
  EXPECT_LT(map->corrupt, 0);
  int differing = -1;
  for (size_t p = 0; p < clean_ids_.size(); ++p) {
    if (clean_ids_[p] != corrupt_ids_[p]) differing = static_cast<int>(p);
  }
  ASSERT_GE(differing, 0);
  for (int p = 0; p < map->positions; ++p) {
    // Before the differing position, the two runs are the same: nothing to restore.
    EXPECT_NEAR(map->residual[p], p == differing ? 1.0 : 0.0, p == differing ? 0.01 : 0.05) << p;
  }
  // At the last layer, only the last position feeds the metric, and it restores all of it.
  EXPECT_NEAR(map->residual[(c.n_layers - 1) * map->positions + map->positions - 1], 1.0, 1e-4);
}

TEST_F(patching, MetricTokensMustBeInTheVocabulary) {
  EXPECT_TRUE(ParsePatchMetric("动物", *tokenizer_).ok());
  testing::ExpectError(ParsePatchMetric("动物-长颈鹿x", *tokenizer_), "--metric", {"长颈鹿x", "not a token"});
  testing::ExpectError(ParsePatchMetric("-马路", *tokenizer_), "--metric", {"TOKEN-TOKEN"});
}

// Each bad input: one line on stderr, a non-zero exit, nothing on stdout.
TEST(intervention_cli, BadInputIsOneLineAndANonZeroExit) {
  const std::string out = testing::TempDir();
  const std::vector<std::vector<std::string>> runs = {
      {"patch", "--clean", kTired, "--corrupt", kWide, "--metric", "动物-长颈鹿x", "-o", out},
      {"patch", "--clean", kTired, "--corrupt", "这个动物", "--metric", "动物-马路", "-o", out},
      {"patch", "--clean", "", "--corrupt", kWide, "--metric", "动物-马路", "-o", out},
      {"patch", "--clean", kTired, "--corrupt", kTired, "--metric", "动物-马路", "-o", out},
      {"ablate", "-p", kTired, "--heads", "3.0"},
      {"ablate", "-p", kTired, "--heads", "0.4"},
      {"ablate", "-p", kTired, "--heads", "2"},
      {"ablate", "-p", kTired, "--heads", "2.0", "--ablate-mode", "half"},
      {"logits", "-p", kTired, "--ablate", "-1.0", "-o", out + "/l.npy"},
      {"generate", "-p", kTired, "--ablate", "9.9", "-n", "1"},
      {"attention", "-p", kTired, "--ablate", "0.0,x", "-o", out},
      {"lens", "-p", kTired, "--ablate", "0.0", "--ablate-mode", "half"},
  };
  for (const std::vector<std::string>& args : runs) {
    const testing::RunResult r = testing::RunToyllm(args);
    EXPECT_TRUE(r.exited && r.exit_code != 0) << testing::Describe(r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << testing::QuotedArgs(args) << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  testing::RemoveTempDir(out);
}

TEST(intervention_cli, AblateShowsTheContinuationWithAndWithoutTheHeads) {
  const testing::RunResult r = testing::RunToyllm({"ablate", "-p", kWide, "--heads", "1.2", "-n", "1"});
  ASSERT_TRUE(testing::Succeeds(r)) << testing::Describe(r);
  EXPECT_NE(r.out.find("no ablation:\n  next token: '马路'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("greedy:     " + kWide + "马路\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ablated 1.2:\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("greedy:     " + kWide + "马路\n", r.out.find("ablated")), std::string::npos) << r.out;
  const testing::RunResult table = testing::RunToyllm(
      {"ablate", "--heldout", std::string(TOYLLM_SOURCE_DIR) + "/models/coref_heldout.tsv", "--heads", "2.0,2.1"});
  ASSERT_TRUE(testing::Succeeds(table)) << testing::Describe(table);
  EXPECT_NE(table.out.find("| none | 200/200 (100.0%) | 200/200 (100.0%) | 400/400 (100.0%) |"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("| 2.0,2.1 | "), std::string::npos) << table.out;
}

TEST(intervention_cli, PatchWritesItsFiles) {
  const std::string out = testing::TempDir();
  const testing::RunResult r =
      testing::RunToyllm({"patch", "--clean", kTired, "--corrupt", kWide, "--metric", "动物-马路", "-o", out});
  ASSERT_TRUE(testing::Succeeds(r)) << testing::Describe(r);
  EXPECT_EQ(testing::ListDir(out), (std::vector<std::string>{"heads.png", "index.html", "mlp.png", "patch.json",
                                                             "patch.npy", "patch_mlp.npy", "patch_residual.npy",
                                                             "residual.png"}));
  testing::RemoveTempDir(out);
}

TEST(intervention_cli, PatchRunsOnALlamaCppGguf) {
  const std::string path = testing::ModelPath("gguf/stories260K.llamacpp-f32.gguf");
  TOYLLM_REQUIRE_FILE(path);
  const std::string out = testing::TempDir();
  const testing::RunResult r = testing::RunToyllm(
      {"patch", "-m", path, "--clean", "Once upon a time, there was a little girl. The girl was happy. She",
       "--corrupt", "Once upon a time, there was a little boy. The boy was happy. She", "--metric", "she-he",
       "-o", out});
  ASSERT_TRUE(testing::Succeeds(r)) << testing::Describe(r);
  EXPECT_NE(r.out.find("layer 4:"), std::string::npos) << r.out;
  EXPECT_TRUE(testing::PathExists(out + "/patch.npy"));
  testing::RemoveTempDir(out);
}

// A byte-level vocabulary stores " on" as "Ġon": --metric names tokens as they read, with or
// without the leading space, as SentencePiece's "▁on" is found from "on".
TEST(patch_metric, ByteLevelTokensAreFoundByTheirText) {
  const std::string path = testing::SharedPath("tokenizers", "hf/qwen3/tokenizer.json");
  TOYLLM_REQUIRE_FILE(path);
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadTokenizerFile(path);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  const std::vector<int> on = (*tokenizer)->Encode(" on", false);
  ASSERT_EQ(on.size(), 1u);
  absl::StatusOr<PatchMetric> metric = ParsePatchMetric(" on-off", **tokenizer);
  ASSERT_TRUE(metric.ok()) << metric.status();
  EXPECT_EQ(metric->a, on[0]);
  EXPECT_EQ(metric->b, (*tokenizer)->Encode("off", false).at(0));
  absl::StatusOr<PatchMetric> bare = ParsePatchMetric("on", **tokenizer);
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->a, (*tokenizer)->Encode("on", false).at(0));
}

}  // namespace
}  // namespace toyllm
