// The few-row kernels (decode's grouped-query attention products) of every instruction set
// this machine has, against the scalar reference, on float32 and f16 matrices, every row
// count up to kFewRows, head widths from 16 to 256 and row strides wider than the rows.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cpu_features.h"
#include "runtime/kernels/few_rows.h"
#include "tests/kernel_test_util.h"

namespace toyllm {
namespace {

using testing::MakeMatrix;
using testing::RandomVector;
using testing::TypedMatrix;
using testing::VectorLevels;

constexpr float kSentinel = 777.0f;

// Kernel and reference sum the same products in different orders: within a few float
// roundings of the sum of their magnitudes.
double Tolerance(double abs_sum, int terms) { return 4.0 * terms * 6e-8 * abs_sum + 1e-6; }

TEST(few_rows, DotsMatchTheScalarReference) {
  std::mt19937 gen(3);
  for (WeightType type : {WeightType::kF32, WeightType::kF16}) {
    for (int d : {16, 48, 64, 128, 256}) {
      for (int keys : {1, 7, 130}) {
        const TypedMatrix k = MakeMatrix(gen, type, keys, d);
        for (int m = 1; m <= kFewRows; ++m) {
          const int lda = d + 5, ldc = keys + 3;
          const std::vector<float> q = RandomVector(gen, static_cast<size_t>(m) * lda);
          std::vector<float> want(static_cast<size_t>(m) * ldc, kSentinel);
          ASSERT_TRUE(FewRowsTake(CpuLevel::kScalar, m, k.view));
          kFewRowsScalar.dots(m, 0.25f, q.data(), lda, k.view, want.data(), ldc);
          for (CpuLevel level : VectorLevels()) {
            SCOPED_TRACE(::testing::Message() << CpuLevelName(level) << " type " << static_cast<int>(type)
                                              << " d " << d << " keys " << keys << " m " << m);
            ASSERT_TRUE(FewRowsTake(level, m, k.view));
            std::vector<float> got(want.size(), kSentinel);
            FewRowsFor(level).dots(m, 0.25f, q.data(), lda, k.view, got.data(), ldc);
            for (int i = 0; i < m; ++i) {
              for (int j = 0; j < ldc; ++j) {
                const float g = got[i * ldc + j], w = want[i * ldc + j];
                if (j >= keys) {
                  ASSERT_EQ(g, kSentinel) << "wrote past row " << i << "'s keys";
                  continue;
                }
                double abs_sum = 0;
                for (int e = 0; e < d; ++e) abs_sum += std::fabs(0.25 * q[i * lda + e] * k.floats[j * d + e]);
                ASSERT_NEAR(g, w, Tolerance(abs_sum, d)) << i << ", " << j;
              }
            }
          }
        }
      }
    }
  }
}

TEST(few_rows, SumsMatchTheScalarReference) {
  std::mt19937 gen(4);
  for (WeightType type : {WeightType::kF32, WeightType::kF16}) {
    for (int d : {16, 48, 64, 128, 256}) {
      for (int keys : {1, 7, 130}) {
        const TypedMatrix v = MakeMatrix(gen, type, keys, d);
        for (int m = 1; m <= kFewRows; ++m) {
          const int lda = keys + 5, ldc = d + 3;
          const std::vector<float> weights = RandomVector(gen, static_cast<size_t>(m) * lda);
          std::vector<float> want(static_cast<size_t>(m) * ldc, kSentinel);
          kFewRowsScalar.sums(m, weights.data(), lda, v.view, want.data(), ldc);
          for (CpuLevel level : VectorLevels()) {
            SCOPED_TRACE(::testing::Message() << CpuLevelName(level) << " type " << static_cast<int>(type)
                                              << " d " << d << " keys " << keys << " m " << m);
            std::vector<float> got(want.size(), kSentinel);
            FewRowsFor(level).sums(m, weights.data(), lda, v.view, got.data(), ldc);
            for (int i = 0; i < m; ++i) {
              for (int e = 0; e < ldc; ++e) {
                const float g = got[i * ldc + e], w = want[i * ldc + e];
                if (e >= d) {
                  ASSERT_EQ(g, kSentinel) << "wrote past row " << i << "'s width";
                  continue;
                }
                double abs_sum = 0;
                for (int j = 0; j < keys; ++j) abs_sum += std::fabs(weights[i * lda + j] * v.floats[j * d + e]);
                ASSERT_NEAR(g, w, Tolerance(abs_sum, keys)) << i << ", " << e;
              }
            }
          }
        }
      }
    }
  }
}

TEST(few_rows, TakeOnlyWhatTheKernelsCanDo) {
  const float data[16 * 3] = {};
  EXPECT_TRUE(FewRowsTake(CpuLevel::kAvx2, kFewRows, Matrix{data, 3, 16, WeightType::kF32}));
  EXPECT_FALSE(FewRowsTake(CpuLevel::kAvx2, kFewRows + 1, Matrix{data, 3, 16, WeightType::kF32}));
  EXPECT_FALSE(FewRowsTake(CpuLevel::kAvx2, 2, Matrix{data, 6, 8, WeightType::kF32})) << "8-wide rows";
  EXPECT_TRUE(FewRowsTake(CpuLevel::kScalar, 2, Matrix{data, 6, 8, WeightType::kF32}));
  EXPECT_FALSE(FewRowsTake(CpuLevel::kAvx512, 2, Matrix{data, 1, 32, WeightType::kQ8_0}));
}

}  // namespace
}  // namespace toyllm
