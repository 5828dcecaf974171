// The KV cache's types (-ctk/-ctv): what it holds is what the type's own encoder and
// decoder make of the keys and values, f16 takes half of f32's memory and
// q8_0 34/128 of it, and the logits move by no more than the measured bounds below.
#include "runtime/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/model_file.h"
#include "models/random_llama.h"
#include "runtime/transformer.h"
#include "runtime/weight_convert.h"
#include "tests/test_env.h"
#include "tests/test_util.h"

namespace toyllm {
namespace {

constexpr KvTypes kF32{WeightType::kF32, WeightType::kF32};
constexpr KvTypes kF16{WeightType::kF16, WeightType::kF16};
constexpr KvTypes kQ8{WeightType::kQ8_0, WeightType::kQ8_0};

ModelConfig SmallConfig() {
  ModelConfig c;
  c.dim = 128;
  c.hidden_dim = 256;
  c.n_layers = 2;
  c.n_heads = 2;
  c.n_kv_heads = 2;
  c.head_dim = 64;
  c.vocab_size = 256;
  c.context_length = 128;
  return c;
}

// What `type` makes of `x`, by the scalar reference encoder and decoder.
std::vector<float> RoundTrip(WeightType type, const std::vector<float>& x) {
  std::string bytes;
  FromFloat32(type, x.data(), static_cast<int64_t>(x.size()), &bytes);
  std::vector<float> out(x.size());
  ToFloat32(type, bytes.data(), static_cast<int64_t>(x.size()), out.data());
  return out;
}

TEST(kv_cache, ReadsBackWhatTheTypeEncodes) {
  const ModelConfig c = SmallConfig();
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  const int n = 5, pos = 3, kv_dim = c.kv_dim();
  std::vector<float> k(n * kv_dim), v(n * kv_dim);
  for (float& x : k) x = normal(rng);
  for (float& x : v) x = normal(rng);
  for (const KvTypes types : {kF32, kF16, kQ8, KvTypes{WeightType::kF16, WeightType::kQ8_0}}) {
    KvCache cache(c, 16, types);
    cache.Store(1, pos, n, k.data(), v.data());
    for (int h = 0; h < c.n_kv_heads; ++h) {
      // The rows as stored, decoded by the scalar reference.
      const auto rows = [&](const Matrix& m) {
        EXPECT_EQ(m.rows, pos + n);
        EXPECT_EQ(m.cols, c.head_dim);
        std::vector<float> x(int64_t{n} * c.head_dim);
        ToFloat32(m.type, m.row(pos), static_cast<int64_t>(x.size()), x.data());
        return x;
      };
      const std::vector<float> got_k = rows(cache.keys(1, h, pos + n));
      const std::vector<float> got_v = rows(cache.values(1, h, pos + n));
      EXPECT_EQ(cache.keys(1, h, 1).type, types.keys);
      EXPECT_EQ(cache.values(1, h, 1).type, types.values);
      for (int t = 0; t < n; ++t) {
        const auto row = [&](const std::vector<float>& x) {
          return std::vector<float>(x.begin() + t * kv_dim + h * c.head_dim,
                                    x.begin() + t * kv_dim + (h + 1) * c.head_dim);
        };
        const auto got = [&](const std::vector<float>& x) {
          return std::vector<float>(x.begin() + t * c.head_dim, x.begin() + (t + 1) * c.head_dim);
        };
        EXPECT_EQ(got(got_k), RoundTrip(types.keys, row(k))) << "head " << h << " row " << t;
        EXPECT_EQ(got(got_v), RoundTrip(types.values, row(v))) << "head " << h << " row " << t;
      }
    }
  }
}

TEST(kv_cache, F16HalvesTheMemory) {
  const ModelConfig c = SmallConfig();
  const int64_t f32 = KvCache::Bytes(c, 100, kF32);
  EXPECT_EQ(f32, int64_t{2} * c.n_layers * c.kv_dim() * 100 * 4);
  EXPECT_EQ(KvCache::Bytes(c, 100, kF16) * 2, f32);
  EXPECT_EQ(KvCache::Bytes(c, 100, kQ8) * 128, f32 * 34);
}

// Only the positions stored take memory: a cache for llama3.2-1b's heads at 32,768
// positions is 2 GiB of float32, which zeroing up front would make resident at once. The
// bound is a quarter of that: AddressSanitizer's shadow of the allocation (an eighth of it,
// poisoned when allocated) is resident too, 128 MiB of it here.
TEST(kv_cache, OnlyStoredPositionsBecomeResident) {
  ModelConfig c;
  c.n_layers = 16;
  c.n_kv_heads = 8;
  c.head_dim = 64;
  const int64_t before = testing::PeakRssKiB();
  KvCache cache(c, 32768);
  ASSERT_EQ(KvCache::Bytes(c, 32768), int64_t{2} << 30);
  std::vector<float> k(c.kv_dim()), v(c.kv_dim());
  for (int pos = 0; pos < 100; ++pos) {
    for (int l = 0; l < c.n_layers; ++l) {
      std::fill(k.begin(), k.end(), static_cast<float>(pos + l));
      std::fill(v.begin(), v.end(), static_cast<float>(-pos));
      cache.Store(l, pos, 1, k.data(), v.data());
    }
  }
  EXPECT_LT(testing::PeakRssKiB() - before, 512 * 1024) << "KiB resident for 100 positions";
  const Matrix keys = cache.keys(15, 7, 100), values = cache.values(3, 0, 100);
  EXPECT_EQ(static_cast<const float*>(keys.row(99))[63], 99.0f + 15);
  EXPECT_EQ(static_cast<const float*>(values.row(42))[0], -42.0f);
}

TEST(kv_cache, Q8NeedsWholeBlocksPerHead) {
  ModelConfig c = SmallConfig();
  EXPECT_TRUE(KvCache::Check(c, kQ8).ok());
  c.head_dim = 48;
  const absl::Status s = KvCache::Check(c, {WeightType::kF32, WeightType::kQ8_0});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("48"), absl::string_view::npos) << s;
  EXPECT_TRUE(KvCache::Check(c, kF16).ok());
}

// Logits of `tokens`: the first half as one prefill (all positions), the rest decoded one
// at a time, so that both of attention's paths read the cache.
std::vector<float> Logits(const ModelFile& model, const std::vector<int>& tokens, KvTypes types) {
  const int n = static_cast<int>(tokens.size()), half = n / 2;
  absl::StatusOr<std::unique_ptr<Transformer>> t =
      Transformer::Create(model.config, model.weights, n, half, types);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  std::vector<float> all;
  absl::StatusOr<absl::Span<const float>> out =
      (*t)->Forward({tokens.data(), static_cast<size_t>(half)}, 0, Transformer::Logits::kAll);
  EXPECT_TRUE(out.ok()) << out.status();
  all.assign(out->begin(), out->end());
  for (int pos = half; pos < n; ++pos) {
    out = (*t)->Forward({tokens[pos]}, pos);
    EXPECT_TRUE(out.ok()) << out.status();
    all.insert(all.end(), out->begin(), out->end());
  }
  return all;
}

struct Difference {
  double max_abs;        // largest |logit - reference logit|
  double relative;       // max_abs over the reference logits' standard deviation
  double top1_agreement;  // positions whose argmax is the reference's
};

Difference Compare(const std::vector<float>& got, const std::vector<float>& want, int vocab) {
  Difference d{0, 0, 0};
  double sum = 0, squares = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    d.max_abs = std::max(d.max_abs, std::fabs(double{got[i]} - want[i]));
    sum += want[i];
    squares += double{want[i]} * want[i];
  }
  const double mean = sum / want.size();
  d.relative = d.max_abs / std::sqrt(squares / want.size() - mean * mean);
  const size_t rows = want.size() / vocab;
  int same = 0;
  for (size_t r = 0; r < rows; ++r) {
    const auto row = [&](const std::vector<float>& x) { return x.begin() + r * vocab; };
    same += std::max_element(row(got), row(got) + vocab) - row(got) ==
            std::max_element(row(want), row(want) + vocab) - row(want);
  }
  d.top1_agreement = static_cast<double>(same) / rows;
  return d;
}

std::vector<int> Tokens(int n, int vocab) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> id(1, vocab - 1);
  std::vector<int> tokens(n);
  for (int& t : tokens) t = id(rng);
  return tokens;
}

// stories260K (a trained model; head_dim 8, so no q8_0): f16 keys and values over 64
// positions. Measured: max |Δlogit| 0.021, 0.25 % of the logits' standard deviation, every
// argmax the same. The bounds leave four times that.
TEST(kv_cache, F16MovesTrainedLogitsLittle) {
  const std::string path = testing::Stories260K();
  TOYLLM_REQUIRE_FILE(path);
  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::vector<int> tokens = Tokens(64, (*model)->config.vocab_size);
  const std::vector<float> f32 = Logits(**model, tokens, kF32);
  const Difference d = Compare(Logits(**model, tokens, kF16), f32, (*model)->config.vocab_size);
  std::cout << "f16 cache: max |Δlogit| " << d.max_abs << ", relative " << d.relative
            << ", top-1 agreement " << d.top1_agreement << "\n";
  EXPECT_GT(d.max_abs, 0.0) << "f16 rounds the keys, so the logits must move";
  EXPECT_LT(d.relative, 1e-2);
  EXPECT_GE(d.top1_agreement, 0.98);
}

// A random model with 64-dimensional heads, so that q8_0 applies too. Measured over 96
// positions: f16 0.08 % of the logits' standard deviation, q8_0 2 % (one argmax in 96
// differs: random logits are close together). The bounds leave three times that.
TEST(kv_cache, Q8AndF16OnARandomModel) {
  const std::string dir = testing::TempDir();
  const std::string path = dir + "/small.gguf";
  ASSERT_TRUE(WriteRandomLlamaGguf(path, SmallConfig(), 1, {}).ok());
  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  const int vocab = (*model)->config.vocab_size;
  const std::vector<int> tokens = Tokens(96, vocab);
  const std::vector<float> f32 = Logits(**model, tokens, kF32);
  const Difference f16 = Compare(Logits(**model, tokens, kF16), f32, vocab);
  const Difference q8 = Compare(Logits(**model, tokens, kQ8), f32, vocab);
  std::cout << "random model, f16 cache: relative " << f16.relative << ", top-1 " << f16.top1_agreement
            << "; q8_0 cache: relative " << q8.relative << ", top-1 " << q8.top1_agreement << "\n";
  EXPECT_GT(f16.max_abs, 0.0);
  EXPECT_GT(q8.relative, f16.relative) << "8 bits are coarser than f16's 11";
  EXPECT_LT(f16.relative, 3e-3);
  EXPECT_LT(q8.relative, 6e-2);
  EXPECT_GE(q8.top1_agreement, 0.9);
  testing::RemoveTempDir(dir);
}

}  // namespace
}  // namespace toyllm
