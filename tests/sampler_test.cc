// The sampler against llama2.c's procedure (see ../shared/golden/stories260K/README.md):
// the xorshift64* generator, greedy argmax, top-k, top-p and plain multinomial sampling.
// The expected tokens of the fixed cases are derived by hand in the comments, from coins
// computed independently of the code under test.
#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace toyllm {
namespace {

// ---------------------------------------------------------------------------------------
// The random number generator.

// An independent xorshift64*: the product is taken in 128 bits and reduced by hand.
uint32_t ReferenceXorshift(uint64_t& state) {
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  const unsigned __int128 product =
      static_cast<unsigned __int128>(state) * static_cast<unsigned __int128>(0x2545F4914F6CDD1Dull);
  const uint64_t low64 = static_cast<uint64_t>(product & ~uint64_t{0});
  return static_cast<uint32_t>(low64 >> 32);
}

// First draws of llama2.c's random_u32 for a few seeds, computed with Debian's
// /usr/bin/python3 (arbitrary-precision integers, masked to 64 bits after each shift):
//   s ^= s >> 12; s ^= (s << 25) & (2**64 - 1); s ^= s >> 27
//   u = ((s * 0x2545F4914F6CDD1D) & (2**64 - 1)) >> 32
struct KnownDraws {
  uint64_t seed;
  uint32_t u[5];
};
constexpr KnownDraws kKnownDraws[] = {
    {1, {0x47e4ce4b, 0xabcfa6a8, 0xb9d10d8f, 0x4db418a0, 0x0e6199b0}},
    {2, {0x8fc99c97, 0x579f4d51, 0x764935f6, 0x94a9eddc, 0x0e5d46c4}},
    {3, {0xd7ae6ae2, 0x036ef3fa, 0x7ea6881e, 0xf3b992de, 0x7b26c208}},
    {42, {0x56ce4ab7, 0xc841eb53, 0xca466be0, 0xf1acc733, 0xc3af4dd7}},
    {133742, {0xb4d0037e, 0x9f67c4b0, 0x89db8337, 0x8857315b, 0x53f322d1}},
    {0xFFFFFFFFFFFFFFFFull, {0xf92cc9e5, 0x8ff484d8, 0x346c95f3, 0xc556cc9c, 0x6c2d653f}},
};

// The first coin (random_f32) of the seeds the hand-derived cases below use, from the same
// Python session: (u >> 8) / 16777216.
constexpr float kCoinSeed1 = 0.28083503246307373f;
constexpr float kCoinSeed2 = 0.5616700649261475f;
constexpr float kCoinSeed3 = 0.8425050973892212f;
constexpr float kCoinSeed133742 = 0.7062990069389343f;
constexpr float kCoinSeedMax = 0.9733396172523499f;  // seed 2^64 - 1
constexpr uint64_t kSeedMax = 0xFFFFFFFFFFFFFFFFull;

TEST(sampler_rng, MatchesPythonComputedDraws) {
  for (const KnownDraws& known : kKnownDraws) {
    SCOPED_TRACE(::testing::Message() << "seed " << known.seed);
    Rng rng(known.seed);
    for (uint32_t expected : known.u) EXPECT_EQ(rng.NextU32(), expected);
  }
}

TEST(sampler_rng, MatchesIndependentImplementationOverLongRuns) {
  for (uint64_t seed : {uint64_t{1}, uint64_t{7}, uint64_t{133742}, uint64_t{0x123456789abcdefull},
                        kSeedMax, uint64_t{1} << 63}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Rng rng(seed);
    uint64_t state = seed;
    for (int i = 0; i < 100000; ++i) {
      const uint32_t expected = ReferenceXorshift(state);
      const uint32_t got = rng.NextU32();
      if (got != expected) {
        ADD_FAILURE() << "draw " << i << ": got " << got << ", expected " << expected;
        break;
      }
    }
  }
}

TEST(sampler_rng, NextFloatIsTheTop24BitsOfNextU32) {
  for (const KnownDraws& known : kKnownDraws) {
    Rng rng(known.seed);
    for (uint32_t u : known.u) {
      const float expected = static_cast<float>(u >> 8) / 16777216.0f;
      EXPECT_EQ(rng.NextFloat(), expected) << "seed " << known.seed;
    }
  }
  EXPECT_EQ(Rng(1).NextFloat(), kCoinSeed1);
  EXPECT_EQ(Rng(2).NextFloat(), kCoinSeed2);
  EXPECT_EQ(Rng(3).NextFloat(), kCoinSeed3);
  EXPECT_EQ(Rng(133742).NextFloat(), kCoinSeed133742);
  EXPECT_EQ(Rng(kSeedMax).NextFloat(), kCoinSeedMax);
}

TEST(sampler_rng, NextFloatIsInUnitIntervalAndUniform) {
  Rng rng(12345);
  constexpr int kDraws = 200000;
  constexpr int kBins = 10;
  int bins[kBins] = {};
  double sum = 0;
  for (int i = 0; i < kDraws; ++i) {
    const float f = rng.NextFloat();
    ASSERT_GE(f, 0.0f);
    ASSERT_LT(f, 1.0f);
    sum += f;
    ++bins[static_cast<int>(f * kBins)];
  }
  EXPECT_NEAR(sum / kDraws, 0.5, 5 * std::sqrt(1.0 / 12 / kDraws));
  const double expected = static_cast<double>(kDraws) / kBins;
  for (int b = 0; b < kBins; ++b) {
    EXPECT_NEAR(bins[b], expected, 5 * std::sqrt(expected * (1 - 1.0 / kBins))) << "bin " << b;
  }
  // The largest value the formula can give is still below 1 in float.
  EXPECT_LT(static_cast<float>(0xFFFFFFFFu >> 8) / 16777216.0f, 1.0f);
}

TEST(sampler_rng, SameSeedSameSequenceDifferentSeedDifferentSequence) {
  Rng a(99), b(99), c(100);
  int differences = 0;
  for (int i = 0; i < 100; ++i) {
    const uint32_t x = a.NextU32();
    EXPECT_EQ(x, b.NextU32());
    differences += x != c.NextU32();
  }
  EXPECT_GT(differences, 90);
}

// ---------------------------------------------------------------------------------------
// Greedy decoding.

TEST(sampler_argmax, FirstMaximumOnTies) {
  EXPECT_EQ(Argmax(std::vector<float>{3.0f}), 0);
  EXPECT_EQ(Argmax(std::vector<float>{1.0f, 5.0f, 2.0f, 5.0f, -3.0f}), 1);
  EXPECT_EQ(Argmax(std::vector<float>{-4.0f, -2.0f, -2.0f, -7.0f}), 1);
  EXPECT_EQ(Argmax(std::vector<float>{0.0f, 0.0f, 0.0f}), 0);
  EXPECT_EQ(Argmax(std::vector<float>{-std::numeric_limits<float>::infinity(), -1e30f}), 1);
  EXPECT_EQ(Argmax(std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f, 4.0f}), 3);
}

TEST(sampler, TemperatureZeroIsArgmaxWhateverTheSeed) {
  for (uint64_t seed : {uint64_t{1}, uint64_t{2}, uint64_t{3}, kSeedMax}) {
    Sampler sampler({.temperature = 0.0f, .top_k = 0, .top_p = 0.9f, .seed = seed});
    for (int step = 0; step < 5; ++step) {
      std::vector<float> logits = {1.0f, 5.0f, 2.0f, 5.0f, -3.0f};
      EXPECT_EQ(sampler.Sample(absl::MakeSpan(logits)), 1);
    }
  }
  // The maximum at the end, and a top-k setting that must not matter.
  Sampler sampler({.temperature = 0.0f, .top_k = 2, .top_p = 1.0f, .seed = 7});
  std::vector<float> logits = {-1.0f, 0.5f, 0.25f, 9.0f};
  EXPECT_EQ(sampler.Sample(absl::MakeSpan(logits)), 3);
}

TEST(sampler, RandomArgmaxCases) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> value(-10.0f, 10.0f);
  Sampler sampler({.temperature = 0.0f, .top_k = 0, .top_p = 0.9f, .seed = 1});
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> logits(1 + trial % 37);
    for (float& l : logits) l = value(gen);
    int best = 0;
    for (size_t i = 1; i < logits.size(); ++i) {
      if (logits[i] > logits[best]) best = static_cast<int>(i);
    }
    EXPECT_EQ(sampler.Sample(absl::MakeSpan(logits)), best);
  }
}

// ---------------------------------------------------------------------------------------
// Sampling with a known coin. Logits are log(p), so softmax at temperature 1 gives back p:
//
//   id:  0     1    2    3    4
//   p:   0.05  0.4  0.1  0.3  0.15
const std::vector<double> kProbs = {0.05, 0.4, 0.1, 0.3, 0.15};

std::vector<float> LogitsOf(const std::vector<double>& probs, double scale = 1.0) {
  std::vector<float> logits;
  for (double p : probs) logits.push_back(static_cast<float>(scale * std::log(p)));
  return logits;
}

int SampleOnce(const SamplerOptions& options, std::vector<float> logits) {
  Sampler sampler(options);
  return sampler.Sample(absl::MakeSpan(logits));
}

// Top-p = 0.75 on kProbs, llama2.c's sample_topp:
//   cutoff = (1 - 0.75) / (5 - 1) = 0.0625, which drops id 0 (0.05);
//   sorted descending: id1 0.4, id3 0.3, id4 0.15, id2 0.1;
//   cumulative: 0.4, 0.7, 0.85 > 0.75, so the nucleus is {1, 3, 4} with cumulative 0.85;
//   r = coin * 0.85, and the token is the first in sorted order whose running sum exceeds r:
//     id1 when r < 0.4 (coin < 0.4706), id3 when r < 0.7 (coin < 0.8235), else id4.
TEST(sampler, TopPPicksTheHandDerivedToken) {
  const auto top_p = [](uint64_t seed) {
    return SampleOnce({.temperature = 1.0f, .top_k = 0, .top_p = 0.75f, .seed = seed},
                      LogitsOf(kProbs));
  };
  // seed 1: coin 0.2808, r = 0.2387 < 0.4 -> id 1.
  EXPECT_EQ(top_p(1), 1);
  // seed 2: coin 0.5617, r = 0.4774 in [0.4, 0.7) -> id 3. Keeping the candidates in id
  // order instead (1: 0.4, 2: 0.1, 3: 0.3 -> cumulative 0.8 > 0.75, r = 0.4494) would pass
  // r at id 2.
  EXPECT_EQ(top_p(2), 3);
  // seed 3: coin 0.8425, r = 0.7161 in [0.7, 0.85) -> id 4. Multinomial sampling over
  // the full distribution would give id 3 here (cumulative in id order 0.05, 0.45, 0.55,
  // 0.85).
  EXPECT_EQ(top_p(3), 4);
  // seed 133742: coin 0.7063, r = 0.6004 -> id 3. Using the coin unscaled (r = 0.7063 >
  // 0.7) would wrongly give id 4.
  EXPECT_EQ(top_p(133742), 3);
  // seed 2^64-1: coin 0.9733, r = 0.8274 -> id 4. Without truncating the nucleus (all four
  // candidates, cumulative 0.95) r would be 0.9247 and pick id 2.
  EXPECT_EQ(top_p(kSeedMax), 4);
}

// Another case where the order of the kept tokens decides: p = (0.1, 0.2, 0.3, 0.4), top-p 0.6.
//   cutoff = 0.4 / 3 = 0.1333, which drops id 0;
//   sorted: id3 0.4, id2 0.3 -> cumulative 0.7 > 0.6, nucleus {3, 2}, cumulative 0.7;
//   seed 1: coin 0.2808, r = 0.1966 < 0.4 -> id 3. (In id order the nucleus would be
//   {1, 2, 3} with cumulative 0.9, r = 0.2527, and the running sum 0.2, 0.5 would pick id 2.)
//   seed 3: coin 0.8425, r = 0.5898 in [0.4, 0.7) -> id 2.
TEST(sampler, TopPSortsByProbability) {
  const std::vector<double> probs = {0.1, 0.2, 0.3, 0.4};
  const SamplerOptions options = {.temperature = 1.0f, .top_k = 0, .top_p = 0.6f, .seed = 1};
  EXPECT_EQ(SampleOnce(options, LogitsOf(probs)), 3);
  SamplerOptions seed3 = options;
  seed3.seed = 3;
  EXPECT_EQ(SampleOnce(seed3, LogitsOf(probs)), 2);
}

// The same sampler draws one coin per step. Seed 3's coins are 0.8425, 0.0134, 0.4947,
// 0.9521, 0.4811 (Python, as above). With top-p 0.75 on kProbs (thresholds on the coin
// 0.4706 and 0.8235): ids 4, 1, 3, 4, 3.
TEST(sampler, TopPDrawsOneCoinPerStep) {
  Sampler sampler({.temperature = 1.0f, .top_k = 0, .top_p = 0.75f, .seed = 3});
  std::vector<int> picked;
  for (int step = 0; step < 5; ++step) {
    std::vector<float> logits = LogitsOf(kProbs);
    picked.push_back(sampler.Sample(absl::MakeSpan(logits)));
  }
  EXPECT_EQ(picked, (std::vector<int>{4, 1, 3, 4, 3}));
}

// top_p = 1 is plain multinomial sampling: the first id whose cumulative probability in
// id order (0.05, 0.45, 0.55, 0.85, 1.0) exceeds the coin. Seed 3's coins 0.8425, 0.0134,
// 0.4947, 0.9521, 0.4811 give ids 3, 0, 2, 4, 2.
TEST(sampler, TopPOneIsMultinomial) {
  Sampler sampler({.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 3});
  std::vector<int> picked;
  for (int step = 0; step < 5; ++step) {
    std::vector<float> logits = LogitsOf(kProbs);
    picked.push_back(sampler.Sample(absl::MakeSpan(logits)));
  }
  EXPECT_EQ(picked, (std::vector<int>{3, 0, 2, 4, 2}));
  // seed 1: coin 0.2808 in [0.05, 0.45) -> id 1; seed 2^64-1: coin 0.9733 -> id 4.
  EXPECT_EQ(SampleOnce({.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 1},
                       LogitsOf(kProbs)),
            1);
  EXPECT_EQ(SampleOnce({.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = kSeedMax},
                       LogitsOf(kProbs)),
            4);
}

// Logits 2·log(p) at temperature 2 are log(p) again, so the picks are those of temperature
// 1 on log(p): the logits are divided by the temperature before the softmax.
TEST(sampler, TemperatureDividesTheLogits) {
  for (uint64_t seed : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{133742}, kSeedMax}) {
    for (float top_p : {0.75f, 1.0f}) {
      EXPECT_EQ(SampleOnce({.temperature = 2.0f, .top_k = 0, .top_p = top_p, .seed = seed},
                           LogitsOf(kProbs, 2.0)),
                SampleOnce({.temperature = 1.0f, .top_k = 0, .top_p = top_p, .seed = seed},
                           LogitsOf(kProbs)))
          << "seed " << seed << " top_p " << top_p;
    }
  }
  // Concretely, seed 3 at top_p 1: coin 0.8425 -> id 3 (see above).
  EXPECT_EQ(SampleOnce({.temperature = 0.5f, .top_k = 0, .top_p = 1.0f, .seed = 3},
                       LogitsOf(kProbs, 0.5)),
            3);
}

// The sampler leaves the probabilities it sampled from in the logits.
TEST(sampler, OverwritesLogitsWithProbabilities) {
  Sampler sampler({.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 1});
  std::vector<float> logits = LogitsOf(kProbs);
  sampler.Sample(absl::MakeSpan(logits));
  for (size_t i = 0; i < kProbs.size(); ++i) EXPECT_NEAR(logits[i], kProbs[i], 1e-6) << i;
}

// Top-k 2 on kProbs keeps id1 (0.4) and id3 (0.3), renormalised to 4/7 and 3/7; with
// top_p 1 the cumulative in id order is 0, 4/7 = 0.5714, 0.5714, 1.0, 1.0:
//   seed 1: coin 0.2808 -> id 1; seed 2: coin 0.5617 -> id 1; seed 3: coin 0.8425 -> id 3.
TEST(sampler, TopKKeepsTheKMostLikely) {
  const auto top_k2 = [](uint64_t seed, std::vector<float>* probs_out = nullptr) {
    Sampler sampler({.temperature = 1.0f, .top_k = 2, .top_p = 1.0f, .seed = seed});
    std::vector<float> logits = LogitsOf(kProbs);
    const int id = sampler.Sample(absl::MakeSpan(logits));
    if (probs_out != nullptr) *probs_out = logits;
    return id;
  };
  std::vector<float> probs;
  EXPECT_EQ(top_k2(1, &probs), 1);
  EXPECT_EQ(top_k2(2), 1);
  EXPECT_EQ(top_k2(3), 3);
  ASSERT_EQ(probs.size(), 5u);
  EXPECT_EQ(probs[0], 0.0f);
  EXPECT_NEAR(probs[1], 4.0 / 7, 1e-6);
  EXPECT_EQ(probs[2], 0.0f);
  EXPECT_NEAR(probs[3], 3.0 / 7, 1e-6);
  EXPECT_EQ(probs[4], 0.0f);
}

// Top-k 3 then top-p 0.75: top-k keeps 0.4, 0.3, 0.15, renormalised by 0.85 to 0.4706 (id1),
// 0.3529 (id3), 0.1765 (id4). Top-p: cutoff 0.0625 drops the zeros; cumulative 0.4706,
// 0.8235 > 0.75 -> nucleus {1, 3}, cumulative 0.8235; id1 when coin * 0.8235 < 0.4706,
// i.e. coin < 0.5714.
//   seed 2: coin 0.5617 -> id 1; seed 3: coin 0.8425 -> id 3; seed 2^64-1: 0.9733 -> id 3.
TEST(sampler, TopKThenTopP) {
  const auto pick = [](uint64_t seed) {
    return SampleOnce({.temperature = 1.0f, .top_k = 3, .top_p = 0.75f, .seed = seed},
                      LogitsOf(kProbs));
  };
  EXPECT_EQ(pick(2), 1);
  EXPECT_EQ(pick(3), 3);
  EXPECT_EQ(pick(kSeedMax), 3);
}

TEST(sampler, TopKKeepsExactlyKTokensEvenOnTies) {
  // Uniform logits: every token ties; the k lowest ids survive.
  for (int k = 1; k <= 6; ++k) {
    Sampler sampler({.temperature = 1.0f, .top_k = k, .top_p = 1.0f, .seed = 11});
    std::vector<float> logits(6, 0.0f);
    sampler.Sample(absl::MakeSpan(logits));
    for (int i = 0; i < 6; ++i) {
      EXPECT_NEAR(logits[i], i < k ? 1.0 / k : 0.0, 1e-6) << "k " << k << " id " << i;
    }
  }
  // Three tokens tie at the threshold; k = 2 keeps the two lowest ids of them.
  {
    Sampler sampler({.temperature = 1.0f, .top_k = 2, .top_p = 1.0f, .seed = 11});
    std::vector<float> logits = {0.0f, 1.0f, 1.0f, 1.0f, 0.0f};
    sampler.Sample(absl::MakeSpan(logits));
    EXPECT_EQ(logits, (std::vector<float>{0.0f, 0.5f, 0.5f, 0.0f, 0.0f}));
  }
  // One token above, two tied at the threshold; k = 2 keeps the top one and id 1.
  {
    Sampler sampler({.temperature = 1.0f, .top_k = 2, .top_p = 1.0f, .seed = 11});
    std::vector<float> logits = {0.0f, 1.0f, 1.0f, 2.0f, 0.0f};
    sampler.Sample(absl::MakeSpan(logits));
    int kept = 0;
    for (float p : logits) kept += p > 0.0f;
    EXPECT_EQ(kept, 2);
    EXPECT_GT(logits[3], 0.0f);
    EXPECT_GT(logits[1], 0.0f);
    EXPECT_NEAR(logits[1] + logits[3], 1.0, 1e-6);
  }
  // Random logits: exactly k survive, they are the k largest, and they sum to 1.
  std::mt19937 gen(17);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int trial = 0; trial < 100; ++trial) {
    const int n = 1 + trial % 50;
    const int k = 1 + (trial * 7) % n;
    std::vector<float> logits(n);
    for (float& l : logits) l = normal(gen);
    std::vector<float> sorted = logits;
    std::sort(sorted.begin(), sorted.end(), std::greater<float>());
    Sampler sampler({.temperature = 1.0f, .top_k = k, .top_p = 1.0f, .seed = 5});
    std::vector<float> probs = logits;
    const int id = sampler.Sample(absl::MakeSpan(probs));
    int kept = 0;
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      if (probs[i] > 0.0f) {
        ++kept;
        EXPECT_GE(logits[i], sorted[k - 1]) << "trial " << trial;
      }
      sum += probs[i];
    }
    EXPECT_EQ(kept, k) << "trial " << trial;
    EXPECT_NEAR(sum, 1.0, 1e-5);
    EXPECT_GT(probs[id], 0.0f) << "sampled a token top-k removed";
  }
}

TEST(sampler, SingleTokenVocabulary) {
  for (float top_p : {0.5f, 1.0f}) {
    std::vector<float> logits = {3.0f};
    Sampler sampler({.temperature = 1.0f, .top_k = 0, .top_p = top_p, .seed = 9});
    EXPECT_EQ(sampler.Sample(absl::MakeSpan(logits)), 0);
  }
}

// ---------------------------------------------------------------------------------------
// Frequencies over many draws.

// Samples `draws` times with one sampler and checks each token's count against `expected`
// probabilities within five standard deviations of the binomial count.
void ExpectFrequencies(const SamplerOptions& options, const std::vector<float>& logits,
                       const std::vector<double>& expected, int draws = 20000) {
  Sampler sampler(options);
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < draws; ++i) {
    std::vector<float> l = logits;
    const int id = sampler.Sample(absl::MakeSpan(l));
    ASSERT_GE(id, 0);
    ASSERT_LT(id, static_cast<int>(logits.size()));
    ++counts[id];
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    const double mean = draws * expected[i];
    const double sd = std::sqrt(draws * expected[i] * (1 - expected[i]));
    if (expected[i] == 0.0) {
      EXPECT_EQ(counts[i], 0) << "token " << i;
    } else {
      EXPECT_NEAR(counts[i], mean, 5 * sd) << "token " << i;
    }
  }
}

TEST(sampler_statistics, MultinomialMatchesTheDistribution) {
  const std::vector<double> p = {0.1, 0.2, 0.3, 0.4};
  ExpectFrequencies({.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 2024}, LogitsOf(p), p);
  ExpectFrequencies({.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 77}, LogitsOf(kProbs),
                    kProbs);
}

TEST(sampler_statistics, TemperatureFlattensTheDistribution) {
  // softmax({0, 1, 2, 3} / 2), in double.
  const std::vector<float> logits = {0.0f, 1.0f, 2.0f, 3.0f};
  std::vector<double> p;
  double sum = 0;
  for (float l : logits) sum += std::exp(l / 2.0);
  for (float l : logits) p.push_back(std::exp(l / 2.0) / sum);
  ExpectFrequencies({.temperature = 2.0f, .top_k = 0, .top_p = 1.0f, .seed = 31337}, logits, p);
}

TEST(sampler_statistics, TopPRenormalisesTheNucleus) {
  // p = (0.5, 0.3, 0.15, 0.05), top-p 0.7: cutoff 0.1 drops id 3; cumulative 0.5, 0.8 > 0.7,
  // nucleus {0, 1} sampled in proportion 0.5 : 0.3.
  const std::vector<double> p = {0.5, 0.3, 0.15, 0.05};
  ExpectFrequencies({.temperature = 1.0f, .top_k = 0, .top_p = 0.7f, .seed = 4242}, LogitsOf(p),
                    {0.625, 0.375, 0.0, 0.0});
}

TEST(sampler_statistics, TopKRenormalisesTheKept) {
  // p = (0.1, 0.2, 0.3, 0.4), top-k 2: ids 3 and 2 in proportion 0.4 : 0.3.
  const std::vector<double> p = {0.1, 0.2, 0.3, 0.4};
  ExpectFrequencies({.temperature = 1.0f, .top_k = 2, .top_p = 1.0f, .seed = 99}, LogitsOf(p),
                    {0.0, 0.0, 3.0 / 7, 4.0 / 7});
}

TEST(sampler_statistics, ChiSquareOverALargerVocabulary) {
  std::mt19937 gen(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  constexpr int kVocab = 50;
  constexpr int kDraws = 20000;
  std::vector<float> logits(kVocab);
  for (float& l : logits) l = normal(gen);
  std::vector<double> p(kVocab);
  double sum = 0;
  for (int i = 0; i < kVocab; ++i) sum += std::exp(static_cast<double>(logits[i]));
  for (int i = 0; i < kVocab; ++i) p[i] = std::exp(static_cast<double>(logits[i])) / sum;

  Sampler sampler({.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 8});
  std::vector<int> counts(kVocab, 0);
  for (int i = 0; i < kDraws; ++i) {
    std::vector<float> l = logits;
    ++counts[sampler.Sample(absl::MakeSpan(l))];
  }
  double chi2 = 0;
  for (int i = 0; i < kVocab; ++i) {
    const double e = kDraws * p[i];
    chi2 += (counts[i] - e) * (counts[i] - e) / e;
  }
  // 49 degrees of freedom: mean 49, standard deviation sqrt(98) = 9.9.
  EXPECT_LT(chi2, 49 + 5 * 9.9);
}

// ---------------------------------------------------------------------------------------
// Validation.

TEST(sampler_validate, AcceptsGoodValues) {
  EXPECT_TRUE(ValidateSamplerOptions({}).ok());
  EXPECT_TRUE(ValidateSamplerOptions({.temperature = 0.0f, .top_k = 0, .top_p = 1.0f, .seed = 1}).ok());
  EXPECT_TRUE(ValidateSamplerOptions({.temperature = 2.5f, .top_k = 40, .top_p = 0.01f, .seed = kSeedMax}).ok());
}

TEST(sampler_validate, RejectsBadValuesNamingThem) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    SamplerOptions options;
    const char* names;
  };
  const SamplerOptions good = {.temperature = 1.0f, .top_k = 0, .top_p = 0.9f, .seed = 1};
  std::vector<Case> cases;
  for (float t : {-1.0f, -1e-9f, nan, inf, -inf}) {
    SamplerOptions o = good;
    o.temperature = t;
    cases.push_back({o, "temperature"});
  }
  for (float p : {0.0f, -0.5f, 1.0001f, 1.5f, nan, inf}) {
    SamplerOptions o = good;
    o.top_p = p;
    cases.push_back({o, "top-p"});
  }
  for (int k : {-1, -3, std::numeric_limits<int>::min()}) {
    SamplerOptions o = good;
    o.top_k = k;
    cases.push_back({o, "top-k"});
  }
  SamplerOptions zero_seed = good;
  zero_seed.seed = 0;
  cases.push_back({zero_seed, "seed"});
  for (const Case& c : cases) {
    const absl::Status status = ValidateSamplerOptions(c.options);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument)
        << c.names << ": t=" << c.options.temperature << " p=" << c.options.top_p
        << " k=" << c.options.top_k << " seed=" << c.options.seed;
    EXPECT_NE(status.message().find(c.names), std::string::npos) << status.message();
  }
}

}  // namespace
}  // namespace toyllm
