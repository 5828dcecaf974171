// The bf16 GEMM of prefill against its plain version: the roundings bit for bit (against
// values worked out by hand, too), the products within float32 summation error, on every
// ragged edge of the 8-row × 32-row tiles.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cpu_features.h"
#include "runtime/kernels/gemm_bf16.h"
#include "tests/kernel_test_util.h"

namespace toyllm {
namespace {

using testing::RandomVector;

float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

std::vector<uint32_t> Pairs(const std::vector<float>& values) {
  std::vector<uint32_t> out(values.size() / 2);
  RoundToBf16PairsScalar(values.data(), static_cast<int64_t>(values.size()), out.data());
  return out;
}

bool SkipWithoutBf16() {
  if (CpuHasBf16Dot()) return false;
  std::cerr << "*** this CPU (or TOYLLM_CPU) has no AVX512_BF16: the bf16 kernel is not tested ***\n";
  return true;
}

TEST(gemm_bf16, ScalarRoundingIsToNearestEvenAndFlushesSubnormals) {
  const float kInf = std::numeric_limits<float>::infinity();
  // 1 + 2⁻⁸ lies halfway between 1 and 1 + 2⁻⁷: to the even one, 1. 1 + 3·2⁻⁸ lies halfway
  // between 1 + 2⁻⁷ and 1 + 2⁻⁶: to the even one, 1 + 2⁻⁶ (0x3F82). Just above a half rounds up.
  const std::vector<uint32_t> words = Pairs({1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 1.0f + 0x1p-8f + 0x1p-20f, -2.0f,
                                             FromBits(0x00000001), -FromBits(0x007FFFFF), kInf, std::nanf(""),
                                             FromBits(0x7F800001), 65504.0f});
  EXPECT_EQ(words[0], 0x3F823F80u);
  EXPECT_EQ(words[1], 0xC0003F81u);
  EXPECT_EQ(words[2], 0x80000000u) << "subnormals become zeros of their sign";
  EXPECT_EQ(words[3] & 0xFFFF, 0x7F80u);
  EXPECT_EQ((words[3] >> 16) & 0x7F80, 0x7F80u);
  EXPECT_NE((words[3] >> 16) & 0x7F, 0u) << "NaN stays NaN";
  EXPECT_EQ(words[4] & 0xFFFF, 0x7FC0u) << "a signalling NaN becomes quiet, not infinity";
  EXPECT_EQ(words[4] >> 16, 0x4780u) << "65504 rounds up to 65536";
}

TEST(gemm_bf16, VectorRoundingEqualsTheScalarOneBitForBit) {
  if (SkipWithoutBf16()) GTEST_SKIP();
  std::mt19937 gen(3);
  std::vector<float> values = RandomVector(gen, 40 * 288);  // the largest x below
  const float specials[] = {0.0f, -0.0f, FromBits(1), FromBits(0x807FFFFF), 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f,
                            std::numeric_limits<float>::infinity(), std::nanf(""), FromBits(0x7F800001), 3e38f};
  for (size_t i = 0; i < std::size(specials); ++i) values[7 * i + 3] = specials[i];
  for (int64_t n : {2, 30, 32, 34, 64, 2000}) {
    std::vector<uint32_t> vector(n / 2 + 1, 0xDEADBEEF), scalar(n / 2);
    RoundToBf16Pairs(values.data(), n, vector.data());
    RoundToBf16PairsScalar(values.data(), n, scalar.data());
    EXPECT_EQ(vector.back(), 0xDEADBEEF) << "wrote past the end";
    vector.pop_back();
    EXPECT_EQ(vector, scalar) << n;
  }
  for (int rows : {1, 15, 16, 17, 40}) {
    for (int cols : {2, 30, 32, 34, 66, 288}) {
      Bf16Panels vector, scalar;
      PackBf16Panels(values.data(), rows, cols, &vector);
      PackBf16PanelsScalar(values.data(), rows, cols, &scalar);
      EXPECT_EQ(vector.rows, rows);
      EXPECT_EQ(vector.cols, cols);
      EXPECT_EQ(vector.words, scalar.words) << rows << " x " << cols;
    }
  }
}

// The plain GEMM equals the products of the rounded values, worked out apart from it.
TEST(gemm_bf16, ScalarGemmMultipliesTheRoundedValues) {
  std::mt19937 gen(4);
  const int rows = 3, n = 18, cols = 10;
  const std::vector<float> x = RandomVector(gen, n * cols), w = RandomVector(gen, rows * cols);
  Bf16Panels panels;
  PackBf16PanelsScalar(x.data(), n, cols, &panels);
  const std::vector<uint32_t> pairs = Pairs(w);
  std::vector<float> y(n * rows);
  GemmBf16Scalar(panels, pairs.data(), rows, y.data(), rows);
  const auto rounded = [](float v) {  // the top 16 bits, to nearest even (no ties here)
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    return FromBits((bits + 0x8000u) & 0xFFFF0000u);
  };
  for (int i = 0; i < n; ++i) {
    for (int r = 0; r < rows; ++r) {
      double exact = 0;
      for (int c = 0; c < cols; ++c) exact += double{rounded(x[i * cols + c])} * rounded(w[r * cols + c]);
      EXPECT_NEAR(y[i * rows + r], exact, 1e-6 * (1 + std::fabs(exact)));
    }
  }
}

TEST(gemm_bf16, EveryTileShapeMatchesTheScalarReference) {
  if (SkipWithoutBf16()) GTEST_SKIP();
  std::mt19937 gen(5);
  for (int cols : {2, 64, 288, 1030}) {
    for (int rows : {1, 7, 8, 9, 23}) {
      for (int n : {2, 15, 16, 17, 32, 33, 50}) {
        SCOPED_TRACE(::testing::Message() << "x [" << n << ", " << cols << "], " << rows << " rows");
        const std::vector<float> x = RandomVector(gen, static_cast<size_t>(n) * cols);
        const std::vector<uint32_t> w = Pairs(RandomVector(gen, static_cast<size_t>(rows) * cols));
        Bf16Panels panels;
        PackBf16Panels(x.data(), n, cols, &panels);
        // Rows of y wider than w has rows: the columns beyond must stay untouched. Added
        // to, y's earlier values (777 and up) must be in the sums.
        const int ldy = rows + 3;
        for (bool add : {false, true}) {
          std::vector<float> y(n * ldy), expected(n * ldy);
          for (int i = 0; i < n * ldy; ++i) y[i] = expected[i] = 777.0f + i % 5;
          GemmBf16(panels, w.data(), rows, y.data(), ldy, add);
          GemmBf16Scalar(panels, w.data(), rows, expected.data(), ldy, add);
          for (int i = 0; i < n; ++i) {
            for (int r = 0; r < ldy; ++r) {
              const float e = expected[i * ldy + r];
              // float32 sums of cols products of 8-bit values: within cols · eps · Σ|product|,
              // and the products of normal values are about 1 each; plus 777's rounding.
              ASSERT_NEAR(y[i * ldy + r], e, 2.0 * (cols + 2) * FLT_EPSILON * cols + (add ? 1e-4 : 0.0))
                  << "row " << i << " col " << r << " add " << add;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace toyllm
