// The inspection tools are observers of the same forward pass that generation runs: their
// attention maps, hidden states and lens agree with independent recomputations.
#include <cfloat>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/weight_convert.h"
#include "tests/test_env.h"
#include "tests/test_util.h"
#include "toyllm.h"
#include "tools/page/attention_output.h"
#include "tools/inspect/logit_lens.h"
#include "tools/inspect/tap_recorder.h"

namespace toyllm {
namespace {

struct Loaded {
  std::unique_ptr<ModelFile> model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Transformer> transformer;
};

Loaded LoadStories() {
  Loaded l;
  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(testing::Stories260K());
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadSentencePieceFile(testing::Tok512());
  EXPECT_TRUE(model.ok() && tokenizer.ok());
  if (!model.ok() || !tokenizer.ok()) return l;
  l.model = *std::move(model);
  l.tokenizer = *std::move(tokenizer);
  absl::StatusOr<std::unique_ptr<Transformer>> t =
      Transformer::Create(l.model->config, l.model->weights, l.model->config.context_length);
  EXPECT_TRUE(t.ok());
  if (t.ok()) l.transformer = *std::move(t);
  return l;
}

std::vector<int> AllOf(int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Every head's weights are softmax(q·k/√d_k) over the causal past, recomputed here in
// double from the q and k the same pass tapped; rows sum to 1 and are 0 above the diagonal.
TEST(inspect, AttentionMapsAreSoftmaxOfTappedQueriesAndKeys) {
  TOYLLM_REQUIRE_FILE(testing::Stories260K());
  Loaded l = LoadStories();
  ASSERT_NE(l.transformer, nullptr);
  const ModelConfig& c = l.model->config;
  const std::vector<int> ids = l.tokenizer->Encode("The cat sat on the mat because it was warm.", true);
  std::set<std::pair<Tap, int>> taps = AttentionTaps(AllOf(c.n_layers));
  for (int layer = 0; layer < c.n_layers; ++layer) {
    taps.insert({Tap::kQ, layer});
    taps.insert({Tap::kK, layer});
  }
  TapRecorder recorder(taps);
  l.transformer->set_observer(&recorder);
  ASSERT_TRUE(Prefill(*l.transformer, ids, 0, Transformer::Logits::kLast).ok());
  absl::StatusOr<AttentionMaps> maps =
      AssembleMaps(recorder, AllOf(c.n_layers), AllOf(c.n_heads), ids, *l.tokenizer);
  ASSERT_TRUE(maps.ok()) << maps.status();
  const int t = static_cast<int>(ids.size());
  ASSERT_EQ(maps->weights.size(), static_cast<size_t>(c.n_layers) * c.n_heads * t * t);
  double worst = 0.0;
  for (int layer = 0; layer < c.n_layers; ++layer) {
    const auto& q = *recorder.Rows(Tap::kQ, layer);
    const auto& k = *recorder.Rows(Tap::kK, layer);
    for (int head = 0; head < c.n_heads; ++head) {
      const int kv = head / c.group_size(), d = c.head_dim;
      for (int i = 0; i < t; ++i) {
        std::vector<double> expected(i + 1);
        double max = -1e300, sum = 0.0, row_sum = 0.0, score_error = 0.0;
        for (int j = 0; j <= i; ++j) {
          double dot = 0.0, magnitude = 0.0;
          for (int e = 0; e < d; ++e) {
            dot += double{q[i][head * d + e]} * k[j][kv * d + e];
            magnitude += std::fabs(double{q[i][head * d + e]} * k[j][kv * d + e]);
          }
          expected[j] = dot / std::sqrt(static_cast<double>(d));
          max = std::max(max, expected[j]);
          // A float dot product in any order (GEMM kernels differ) lies within this of the exact one.
          score_error = std::max(score_error, (d + 2) * FLT_EPSILON * magnitude / std::sqrt(static_cast<double>(d)));
        }
        for (double& e : expected) sum += (e = std::exp(e - max));
        for (int j = 0; j < t; ++j) {
          const float w = maps->at(layer, head, i, j);
          row_sum += w;
          if (j > i) {
            EXPECT_EQ(w, 0.0f) << "causal mask at layer " << layer << " head " << head;
          } else {
            // A score off by δ moves a weight w by at most about 2·w·δ; then float rounding.
            const double weight = expected[j] / sum;
            worst = std::max(worst, std::fabs(w - weight) / (2 * weight * score_error + 1e-6));
          }
        }
        EXPECT_NEAR(row_sum, 1.0, 1e-5);
      }
    }
  }
  EXPECT_LT(worst, 1.0);  // in units of each weight's own bound
}

// What generation captures step by step from the KV cache equals one pass over the
// whole text it produced.
TEST(inspect, GenerationCapturesTheSameMapsAsOnePassOverItsText) {
  TOYLLM_REQUIRE_FILE(testing::Stories260K());
  Loaded l = LoadStories();
  ASSERT_NE(l.transformer, nullptr);
  const ModelConfig& c = l.model->config;
  TapRecorder during(AttentionTaps(AllOf(c.n_layers)));
  l.transformer->set_observer(&during);
  std::vector<int> ids = l.tokenizer->Encode("Once upon a time", true);
  const size_t prompt = ids.size();
  Sampler greedy({.temperature = 0.0f});
  GenerateOptions options;
  options.n_predict = 30;
  ASSERT_TRUE(Generate(*l.transformer, greedy, std::vector<int>(ids), options,
                       [&ids](int id) { ids.push_back(id); }).ok());
  ASSERT_EQ(ids.size(), prompt + 30);
  ASSERT_TRUE(l.transformer->Forward({ids.back()}, static_cast<int>(ids.size()) - 1).ok());
  absl::StatusOr<AttentionMaps> stepwise =
      AssembleMaps(during, AllOf(c.n_layers), AllOf(c.n_heads), ids, *l.tokenizer);
  ASSERT_TRUE(stepwise.ok()) << stepwise.status();

  Loaded fresh = LoadStories();
  TapRecorder once(AttentionTaps(AllOf(c.n_layers)));
  fresh.transformer->set_observer(&once);
  ASSERT_TRUE(Prefill(*fresh.transformer, ids, 0, Transformer::Logits::kLast).ok());
  absl::StatusOr<AttentionMaps> whole =
      AssembleMaps(once, AllOf(c.n_layers), AllOf(c.n_heads), ids, *l.tokenizer);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(stepwise->weights.size(), whole->weights.size());
  EXPECT_LT(testing::MaxAbsDiff(stepwise->weights, whole->weights), 1e-5)
      << "batched and step-by-step attention differ only by rounding";
}

// The lens at the last block is the model's own prediction: softmax of the logits.
TEST(inspect, LensOfTheLastBlockIsTheModelsPrediction) {
  TOYLLM_REQUIRE_FILE(testing::Stories260K());
  Loaded l = LoadStories();
  ASSERT_NE(l.transformer, nullptr);
  const ModelConfig& c = l.model->config;
  const std::vector<int> ids = l.tokenizer->Encode("Once upon a time there was", true);
  TapRecorder recorder({{Tap::kEmbed, -1}, {Tap::kResidPost, c.n_layers - 1}});
  l.transformer->set_observer(&recorder);
  absl::StatusOr<std::vector<float>> logits = Prefill(*l.transformer, ids, 0, Transformer::Logits::kAll);
  ASSERT_TRUE(logits.ok());
  const auto& last = *recorder.Rows(Tap::kResidPost, c.n_layers - 1);
  for (size_t p = 0; p < ids.size(); ++p) {
    std::vector<float> probs(logits->begin() + p * c.vocab_size, logits->begin() + (p + 1) * c.vocab_size);
    Softmax(probs.data(), c.vocab_size);
    const std::vector<float> lens = LensProbabilities(*l.model, last[p]);
    for (int v = 0; v < c.vocab_size; ++v) ASSERT_NEAR(lens[v], probs[v], 1e-6) << "position " << p;
  }
  // The embed stage is the token's own row of the embedding table.
  const auto& embed = *recorder.Rows(Tap::kEmbed, -1);
  const Matrix& embedding = l.model->weights.token_embedding;
  for (size_t p = 0; p < ids.size(); ++p) {
    std::vector<float> row(c.dim);
    ToFloat32(embedding.type, embedding.row(ids[p]), c.dim, row.data());
    EXPECT_EQ(embed[p], row);
  }
}

// models/article.gguf is the article's example: toyllm computes every number it prints.
TEST(inspect, ArticleModelReproducesTheArticle) {
  const std::string path = std::string(TOYLLM_SOURCE_DIR) + "/models/article.gguf";
  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadTokenizer((*model)->vocabulary, path);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  const ModelConfig& c = (*model)->config;
  EXPECT_EQ(c.norm, NormKind::kNone);
  EXPECT_EQ(c.rope_layout, RopeLayout::kNone);
  EXPECT_EQ(c.hidden_dim, 0);
  EXPECT_EQ(c.head_dim, 2);
  const std::vector<int> ids = (*tokenizer)->Encode("动物马路它", /*add_bos=*/true);
  ASSERT_EQ(ids.size(), 3u) << "no BOS: the article's sentence starts with its first word";
  EXPECT_EQ((*tokenizer)->Decode(ids), "动物马路它");

  absl::StatusOr<std::unique_ptr<Transformer>> t = Transformer::Create(c, (*model)->weights, c.context_length);
  ASSERT_TRUE(t.ok());
  TapRecorder recorder({{Tap::kQ, 0}, {Tap::kK, 0}, {Tap::kV, 0}, {Tap::kScores, 0}, {Tap::kWeights, 0},
                        {Tap::kKqvOut, 0}});
  (*t)->set_observer(&recorder);
  ASSERT_TRUE(Prefill(**t, ids, 0, Transformer::Logits::kLast).ok());
  const auto& q = *recorder.Rows(Tap::kQ, 0);
  const auto& k = *recorder.Rows(Tap::kK, 0);
  const auto& v = *recorder.Rows(Tap::kV, 0);
  const auto near = [](const std::vector<float>& actual, std::vector<float> expected, float tolerance) {
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual[i], expected[i], tolerance) << i;
  };
  // The article's table of Q, K, V for 动物, 马路 and 它.
  near(q[0], {0.44f, -0.35f}, 1e-6f);
  near(k[0], {0.22f, -0.175f}, 1e-6f);
  near(v[0], {0.238f, 0.009f}, 1e-6f);
  near(q[1], {0.86f, 0.45f}, 1e-6f);
  near(k[1], {0.43f, 0.225f}, 1e-6f);
  near(v[1], {-0.075f, 0.248f}, 1e-6f);
  near(q[2], {0.47f, -0.15f}, 1e-6f);
  near(k[2], {0.235f, -0.075f}, 1e-6f);
  near(v[2], {-0.065f, 0.073f}, 1e-6f);
  // score(它, ·) = q·k: 0.12965, 0.16835, 0.1217; divided by √2 before the softmax.
  const std::vector<float>& scaled = (*recorder.Rows(Tap::kScores, 0, 0))[2];
  near({scaled[0] * std::sqrt(2.0f), scaled[1] * std::sqrt(2.0f), scaled[2] * std::sqrt(2.0f)},
       {0.12965f, 0.16835f, 0.1217f}, 1e-6f);
  // The article rounds the weights to [0.331, 0.34, 0.329] and the output to [0.031, 0.111].
  near((*recorder.Rows(Tap::kWeights, 0, 0))[2], {0.331f, 0.34f, 0.329f}, 1e-3f);
  near((*recorder.Rows(Tap::kKqvOut, 0))[2], {0.031f, 0.111f}, 1e-3f);
}

// scripts/make-article-model.sh rebuilds exactly the committed file.
TEST(inspect, ArticleModelIsRebuiltFromTheScript) {
  const std::string committed = testing::ReadFile(std::string(TOYLLM_SOURCE_DIR) + "/models/article.gguf");
  ASSERT_FALSE(committed.empty());
  const std::string rebuilt = testing::TempDir() + "/article.gguf";
  ASSERT_EQ(std::system((std::string(TOYLLM_MAKE_ARTICLE) + " " + rebuilt).c_str()), 0);
  EXPECT_EQ(testing::ReadFile(rebuilt), committed);
}

}  // namespace
}  // namespace toyllm
