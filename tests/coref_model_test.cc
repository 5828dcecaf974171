// The project's own model, models/coref.gguf, on the held-out sentences its corpus script
// wrote to models/coref_heldout.tsv: combinations of animal, obstacle and adjective, and
// sentence frames, that training never saw. Run by the C++ runtime alone, no PyTorch.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "models/model_file.h"
#include "runtime/generate.h"
#include "runtime/taps.h"
#include "runtime/transformer.h"
#include "tests/test_env.h"
#include "tests/test_util.h"
#include "tokenizer/load_tokenizer.h"
#include "tools/inspect/activation_patch.h"
#include "tools/inspect/head_ablation.h"
#include "tools/inspect/referent_accuracy.h"

namespace toyllm {
namespace {

const std::string kModel = std::string(TOYLLM_SOURCE_DIR) + "/models/coref.gguf";
const std::string kHeldOut = std::string(TOYLLM_SOURCE_DIR) + "/models/coref_heldout.tsv";

struct HeldOutSentence {
  std::string kind;      // "animal" (累: 它 is the animal) or "obstacle" (宽: the obstacle)
  std::string prompt;    // ends with "它指的是"
  std::string referent;  // the noun 它 means
  std::string other;     // the other noun of the sentence
};

std::vector<HeldOutSentence> ReadHeldOut() {
  std::vector<HeldOutSentence> sentences;
  std::ifstream in(kHeldOut);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = absl::StrSplit(line, '\t');
    EXPECT_EQ(f.size(), 4u) << kHeldOut << ": " << line;
    if (f.size() == 4) sentences.push_back({f[0], f[1], f[2], f[3]});
  }
  return sentences;
}

// The attention weights of the last query position, per layer and head.
class LastRowAttention : public TapObserver {
 public:
  void Observe(const TapData& tap) override {
    if (tap.tap != Tap::kWeights) return;
    const float* last = tap.data + static_cast<size_t>(tap.rows - 1) * tap.cols;
    weights_[{tap.layer, tap.head}].assign(last, last + tap.cols);
  }
  const std::vector<float>& at(int layer, int head) const { return weights_.at({layer, head}); }

 private:
  std::map<std::pair<int, int>, std::vector<float>> weights_;
};

// One held-out sentence through the runtime: the greedy next token, and the last
// position's attention on the two nouns.
struct Reading {
  bool named_referent = false;
  // [layer][head]: more weight on the referent than on the other noun.
  std::vector<std::vector<bool>> prefers_referent;
};

class coref_model : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(kModel);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = model->release();
    absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer =
        LoadTokenizer(model_->vocabulary, kModel);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    tokenizer_ = tokenizer->release();
    sentences_ = new std::vector<HeldOutSentence>(ReadHeldOut());
    ASSERT_GE(sentences_->size(), 100u) << kHeldOut;
  }
  static void TearDownTestSuite() {
    delete sentences_;
    delete tokenizer_;
    delete model_;
  }

  // The position of the piece `noun` among `ids`; -1 when it is not one piece.
  static int Position(const std::vector<int>& ids, const std::string& noun) {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (tokenizer_->Piece(ids[i]) == noun) return static_cast<int>(i);
    }
    return -1;
  }

  static Reading Read(const HeldOutSentence& s) {
    const ModelConfig& c = model_->config;
    absl::StatusOr<std::unique_ptr<Transformer>> t =
        Transformer::Create(c, model_->weights, c.context_length);
    EXPECT_TRUE(t.ok()) << t.status();
    LastRowAttention attention;
    (*t)->set_observer(&attention);
    const std::vector<int> ids = tokenizer_->Encode(s.prompt, /*add_bos=*/true);
    absl::StatusOr<std::vector<float>> logits = Prefill(**t, ids, 0, Transformer::Logits::kLast);
    EXPECT_TRUE(logits.ok()) << logits.status();
    Reading r;
    const int next = std::max_element(logits->begin(), logits->end()) - logits->begin();
    r.named_referent = tokenizer_->Piece(next) == s.referent;
    const int referent = Position(ids, s.referent), other = Position(ids, s.other);
    EXPECT_GE(referent, 0) << s.prompt;
    EXPECT_GE(other, 0) << s.prompt;
    r.prefers_referent.assign(c.n_layers, std::vector<bool>(c.n_heads));
    for (int l = 0; l < c.n_layers; ++l) {
      for (int h = 0; h < c.n_heads; ++h) {
        const std::vector<float>& w = attention.at(l, h);
        r.prefers_referent[l][h] = w[referent] > w[other];
      }
    }
    return r;
  }

  static ModelFile* model_;
  static Tokenizer* tokenizer_;
  static std::vector<HeldOutSentence>* sentences_;
};

ModelFile* coref_model::model_ = nullptr;
Tokenizer* coref_model::tokenizer_ = nullptr;
std::vector<HeldOutSentence>* coref_model::sentences_ = nullptr;

TEST_F(coref_model, GreedyContinuationNamesTheReferentOfBothKinds) {
  for (const std::string kind : {"animal", "obstacle"}) {
    int right = 0, total = 0;
    for (const HeldOutSentence& s : *sentences_) {
      if (s.kind != kind) continue;
      right += Read(s).named_referent;
      ++total;
    }
    ASSERT_GT(total, 0) << kind;
    const double rate = static_cast<double>(right) / total;
    std::cout << kind << ": " << right << " of " << total << " held-out sentences ("
              << rate * 100 << "%) continue with the referent\n";
    EXPECT_GE(rate, 0.95) << kind;
  }
}

// The position of "是", which predicts the referent, attends to the referent more than to
// the other noun, in one head of the top half of the layers for nearly every sentence.
TEST_F(coref_model, AHeadOfTheTopLayersAttendsToTheReferent) {
  const ModelConfig& c = model_->config;
  std::vector<Reading> readings;
  std::vector<std::vector<int>> preferred(c.n_layers, std::vector<int>(c.n_heads));
  for (const HeldOutSentence& s : *sentences_) {
    const Reading& r = readings.emplace_back(Read(s));
    for (int l = 0; l < c.n_layers; ++l) {
      for (int h = 0; h < c.n_heads; ++h) preferred[l][h] += r.prefers_referent[l][h];
    }
  }
  int best_layer = c.n_layers / 2, best_head = 0;
  for (int l = c.n_layers / 2; l < c.n_layers; ++l) {
    for (int h = 0; h < c.n_heads; ++h) {
      std::cout << "layer " << l << ", head " << h << ": " << preferred[l][h] << " of "
                << sentences_->size() << "\n";
      if (preferred[l][h] > preferred[best_layer][best_head]) best_layer = l, best_head = h;
    }
  }
  const double rate = static_cast<double>(preferred[best_layer][best_head]) / sentences_->size();
  std::cout << "best: layer " << best_layer << ", head " << best_head << " (" << rate * 100
            << "%)\n";
  for (const std::string kind : {"animal", "obstacle"}) {
    int right = 0, total = 0;
    for (size_t i = 0; i < sentences_->size(); ++i) {
      if ((*sentences_)[i].kind != kind) continue;
      right += readings[i].prefers_referent[best_layer][best_head];
      ++total;
    }
    std::cout << "  " << kind << ": " << right << " of " << total << "\n";
  }
  EXPECT_GE(rate, 0.90);
}

// The README's head-ablation table (toyllm ablate --heldout models/coref_heldout.tsv):
// the attention pattern of layer 2 head 0 points at the referent, but removing the head
// changes no answer; removing layer 1 head 2 breaks nearly every "obstacle" sentence.
TEST_F(coref_model, AblationShowsLayer1Head2DecidesAndLayer2Head0DoesNot) {
  absl::StatusOr<std::vector<ReferentSentence>> sentences = ReadReferentTsv(kHeldOut);
  ASSERT_TRUE(sentences.ok()) << sentences.status();
  const ModelConfig& c = model_->config;
  absl::StatusOr<std::unique_ptr<Transformer>> t = Transformer::Create(c, model_->weights, c.context_length);
  ASSERT_TRUE(t.ok());
  const auto accuracy = [&](std::vector<HeadRef> heads) {
    const InterventionFor ablate = [&](const std::vector<int>&) -> absl::StatusOr<std::unique_ptr<Intervention>> {
      if (heads.empty()) return nullptr;
      return std::make_unique<HeadAblation>(heads, c.head_dim);
    };
    absl::StatusOr<ReferentAccuracy> a = GreedyReferentAccuracy(**t, *tokenizer_, *sentences, ablate);
    EXPECT_TRUE(a.ok()) << a.status();
    return a.ok() ? *a : ReferentAccuracy{};
  };
  const ReferentAccuracy none = accuracy({});
  EXPECT_EQ(none.all.right, 400);
  EXPECT_EQ(none.all.total, 400);
  const ReferentAccuracy l2h0 = accuracy({{2, 0}});
  EXPECT_EQ(l2h0.all.right, 400);
  const ReferentAccuracy layer2 = accuracy({{2, 0}, {2, 1}, {2, 2}, {2, 3}});
  EXPECT_EQ(layer2.all.right, 400);
  const ReferentAccuracy l1h2 = accuracy({{1, 2}});
  EXPECT_EQ(l1h2.by_kind.at("animal").right, 200);
  EXPECT_NEAR(l1h2.by_kind.at("obstacle").right, 21, 5);
}

// The README's patching map of the article's pair: layer 2's heads restore almost nothing;
// layer 1's heads 0 and 3 and the MLPs carry the difference.
TEST_F(coref_model, PatchingTheArticlesPairPointsAtLayer1) {
  const ModelConfig& c = model_->config;
  absl::StatusOr<std::unique_ptr<Transformer>> t = Transformer::Create(c, model_->weights, c.context_length);
  ASSERT_TRUE(t.ok());
  absl::StatusOr<PatchMetric> metric = ParsePatchMetric("动物-马路", *tokenizer_);
  ASSERT_TRUE(metric.ok());
  absl::StatusOr<PatchMap> map =
      PatchEachComponent(**t, tokenizer_->Encode("这个动物并没有过马路，因为它太累了。它指的是", true),
                         tokenizer_->Encode("这个动物并没有过马路，因为它太宽了。它指的是", true), *metric);
  ASSERT_TRUE(map.ok()) << map.status();
  for (int h = 0; h < c.n_heads; ++h) EXPECT_LT(map->head[2 * c.n_heads + h], 0.1) << "layer 2 head " << h;
  EXPECT_NEAR(map->head[1 * c.n_heads + 0], 0.33, 0.05);
  EXPECT_NEAR(map->head[1 * c.n_heads + 3], 0.35, 0.05);
  EXPECT_NEAR(map->mlp[0], 0.61, 0.05);
}

// The README's main command: `generate` without -m runs this model.
TEST_F(coref_model, GenerateWithoutAModelResolvesTheArticlesSentences) {
  for (const auto& [adjective, referent] :
       {std::pair{"累", "动物"}, std::pair{"宽", "马路"}}) {
    const std::string prompt =
        std::string("这个动物并没有过马路，因为它太") + adjective + "了。它指的是";
    const testing::RunResult r =
        testing::RunToyllm({"generate", "-p", prompt, "--temp", "0", "-n", "1"});
    ASSERT_TRUE(testing::Succeeds(r)) << testing::Describe(r);
    EXPECT_EQ(r.out, prompt + referent + "\n") << adjective;
  }
}

// attention, explain and lens inspect the same model without -m.
TEST_F(coref_model, InspectionCommandsUseTheDefaultModel) {
  const std::string prompt = "这个动物并没有过马路，因为它太累了。它指的是";
  const std::string maps = testing::TempDir();
  const testing::RunResult attention = testing::RunToyllm({"attention", "-p", prompt, "-o", maps});
  EXPECT_TRUE(testing::Succeeds(attention)) << testing::Describe(attention);
  EXPECT_TRUE(testing::PathExists(maps + "/attention.npy"));
  testing::RemoveTempDir(maps);
  const testing::RunResult explain = testing::RunToyllm({"explain", "-p", prompt, "--token", "是"});
  EXPECT_TRUE(testing::Succeeds(explain)) << testing::Describe(explain);
  EXPECT_NE(explain.out.find("是"), std::string::npos) << explain.out;
  const testing::RunResult lens = testing::RunToyllm({"lens", "-p", prompt});
  EXPECT_TRUE(testing::Succeeds(lens)) << testing::Describe(lens);
  EXPECT_NE(lens.out.find("动物"), std::string::npos) << lens.out;
  const testing::RunResult info = testing::RunToyllm({"info"});
  EXPECT_TRUE(testing::Succeeds(info)) << testing::Describe(info);
  EXPECT_NE(info.out.find("coref.gguf"), std::string::npos) << info.out;
  const testing::RunResult tokenize = testing::RunToyllm({"tokenize", "-p", "它", "--ids"});
  EXPECT_TRUE(testing::Succeeds(tokenize)) << testing::Describe(tokenize);
}

// The prompt is echoed as typed, even a character the 126-piece vocabulary lacks (which
// decodes to " ⁇ "); only the continuation is decoded from ids.
TEST_F(coref_model, GenerateEchoesThePromptAsTyped) {
  const std::string prompt = "这只狗并没有过马路，因为它太累了。它指的是";  // 只 is not a piece
  const testing::RunResult r = testing::RunToyllm({"generate", "-p", prompt, "--temp", "0", "-n", "2"});
  ASSERT_TRUE(testing::Succeeds(r)) << testing::Describe(r);
  EXPECT_EQ(r.out.rfind(prompt, 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("\xE2\x81\x87"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace toyllm
