// toyllm against llama.cpp on the zoo's random-weight models of real architectures
// (../shared/zoo, see its README): the same token ids in, llama.cpp b4748's logits at every
// position and its greedy continuation out. The model's own tokenizer must give llama.cpp's
// ids for the prompt text; the forward pass is then fed the golden ids, so a tokenizer fault
// and a forward-pass fault fail separately.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "models/model_file.h"
#include "runtime/generate.h"
#include "runtime/transformer.h"
#include "tests/test_env.h"
#include "tests/test_util.h"
#include "tokenizer/load_tokenizer.h"

namespace toyllm {
namespace {

// The agreement: logits correlate this well at every position, and the greedy ids
// agree until llama.cpp itself had a top-1 margin below kSafeMargin (where its 8-bit
// rounding of the activations may legitimately pick the other token).
constexpr double kMinCorrelation = 0.999;
constexpr double kSafeMargin = 1.5;

// One row per model file and golden directory.
struct ZooCase {
  const char* model;   // under zoo/models
  const char* golden;  // under zoo/golden
  std::vector<const char*> prompts;
};

const ZooCase kCases[] = {
    {"qwen2-Q8_0.gguf", "qwen2/Q8_0", {"p1", "p2"}},
    {"qwen2-Q4_K_M.gguf", "qwen2/Q4_K_M", {"p1"}},
    {"llama31-Q4_K_M.gguf", "llama31/Q4_K_M", {"p1"}},
};

nlohmann::json ReadJson(const std::string& path) {
  const std::string text = testing::ReadFile(path);
  EXPECT_FALSE(text.empty()) << path;
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// Pearson correlation of two rows.
double Correlation(const float* a, const float* b, size_t n) {
  double mean_a = 0.0, mean_b = 0.0;
  for (size_t i = 0; i < n; ++i) {
    mean_a += a[i];
    mean_b += b[i];
  }
  mean_a /= n;
  mean_b /= n;
  double ab = 0.0, aa = 0.0, bb = 0.0;
  for (size_t i = 0; i < n; ++i) {
    ab += (a[i] - mean_a) * (b[i] - mean_b);
    aa += (a[i] - mean_a) * (a[i] - mean_a);
    bb += (b[i] - mean_b) * (b[i] - mean_b);
  }
  return ab / std::sqrt(aa * bb);
}

// The highest logit's id, the lowest id on ties (as the golden files choose).
int Argmax(absl::Span<const float> logits) {
  return static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

class zoo : public ::testing::TestWithParam<ZooCase> {};

TEST_P(zoo, LogitsAndGreedyIdsAgreeWithLlamaCpp) {
  const ZooCase& zc = GetParam();
  const std::string path = testing::SharedPath("zoo", std::string("models/") + zc.model);
  TOYLLM_REQUIRE_FILE(path);
  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelConfig& c = (*model)->config;
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadTokenizer((*model)->vocabulary, path);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();

  for (const char* prompt : zc.prompts) {
    SCOPED_TRACE(::testing::Message() << zc.model << " " << prompt);
    const std::string dir = std::string("golden/") + zc.golden + "/" + prompt;
    const std::string ids_path = testing::SharedPath("zoo", dir + ".json");
    const std::string npy_path = testing::SharedPath("zoo", dir + ".npy");
    const std::string greedy_path = testing::SharedPath("zoo", dir + ".greedy.json");
    TOYLLM_REQUIRE_FILE(ids_path);
    TOYLLM_REQUIRE_FILE(npy_path);
    TOYLLM_REQUIRE_FILE(greedy_path);
    const nlohmann::json ids_json = ReadJson(ids_path);
    ASSERT_TRUE(ids_json.is_object() && ids_json["ids"].is_array()) << ids_path;
    const std::vector<int> ids = ids_json["ids"].get<std::vector<int>>();
    const std::string text_path = testing::SharedPath("zoo", std::string("prompts/") + prompt + ".txt");
    TOYLLM_REQUIRE_FILE(text_path);
    EXPECT_EQ((*tokenizer)->Encode(testing::ReadFile(text_path), (*tokenizer)->add_bos()), ids)
        << "the model's tokenizer disagrees with llama.cpp's ids";
    absl::StatusOr<testing::NpyArray> golden = testing::ReadNpyFloat32(npy_path);
    ASSERT_TRUE(golden.ok()) << golden.status();
    ASSERT_EQ(golden->shape, (std::vector<int64_t>{static_cast<int64_t>(ids.size()), c.vocab_size}));

    // Every position's logits, in one prefill as llama.cpp computed them.
    absl::StatusOr<std::unique_ptr<Transformer>> t =
        Transformer::Create(c, (*model)->weights, 256, /*max_batch=*/64);
    ASSERT_TRUE(t.ok()) << t.status();
    absl::StatusOr<std::vector<float>> logits = Prefill(**t, ids, 0, Transformer::Logits::kAll);
    ASSERT_TRUE(logits.ok()) << logits.status();
    ASSERT_EQ(logits->size(), golden->values.size());
    double lowest = 1.0, max_diff = 0.0;
    int same_argmax = 0;
    const size_t vocab = c.vocab_size;
    for (size_t p = 0; p < ids.size(); ++p) {
      const float* ours = &(*logits)[p * vocab];
      const float* theirs = &golden->values[p * vocab];
      const double r = Correlation(ours, theirs, vocab);
      EXPECT_GE(r, kMinCorrelation) << "position " << p;
      lowest = std::min(lowest, r);
      for (size_t v = 0; v < vocab; ++v) max_diff = std::max<double>(max_diff, std::fabs(ours[v] - theirs[v]));
      same_argmax += Argmax({ours, vocab}) == Argmax({theirs, vocab});
    }

    // Greedy continuation from that state, one token per Forward with the cache.
    const nlohmann::json greedy = ReadJson(greedy_path);
    ASSERT_TRUE(greedy.is_object() && greedy["ids"].is_array() && greedy["top1_margin"].is_array());
    const std::vector<int> want = greedy["ids"].get<std::vector<int>>();
    const std::vector<double> margin = greedy["top1_margin"].get<std::vector<double>>();
    ASSERT_EQ(want.size(), margin.size());
    const int safe = static_cast<int>(
        std::find_if(margin.begin(), margin.end(), [](double m) { return m < kSafeMargin; }) -
        margin.begin());
    std::vector<int> got = {Argmax({&(*logits)[(ids.size() - 1) * vocab], vocab})};
    while (got.size() < want.size()) {
      absl::StatusOr<absl::Span<const float>> next =
          (*t)->Forward({got.back()}, static_cast<int>(ids.size() + got.size() - 1));
      ASSERT_TRUE(next.ok()) << next.status();
      got.push_back(Argmax(*next));
    }
    int agree = 0;
    while (agree < static_cast<int>(want.size()) && got[agree] == want[agree]) ++agree;
    EXPECT_GE(agree, safe) << "greedy ids differ at step " << agree << " of " << want.size()
                           << ", before the first step with a margin below " << kSafeMargin;
    std::cout << "[ measured ] " << zc.model << " " << prompt << ": " << ids.size()
              << " positions, lowest correlation " << lowest << ", max |diff| " << max_diff
              << ", same argmax at " << same_argmax << "; greedy ids agree for " << agree << " of "
              << want.size() << " steps (margin >= " << kSafeMargin << " for the first " << safe << ")\n";
  }
}

void PrintTo(const ZooCase& zc, std::ostream* os) { *os << zc.model; }

// "qwen2_Q8_0" for qwen2-Q8_0.gguf.
std::string CaseName(const ::testing::TestParamInfo<ZooCase>& info) {
  std::string name = info.param.model;
  name = name.substr(0, name.rfind('.'));
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(files, zoo, ::testing::ValuesIn(kCases), CaseName);

}  // namespace
}  // namespace toyllm
