// Each op of runtime/ops.h against a plain scalar reference computed in double, on random
// data and ragged shapes (1, 3, 17, 33, 100).
#include "runtime/ops.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/few_rows.h"
#include "runtime/weight_convert.h"

namespace toyllm {
namespace {

constexpr int kSizes[] = {1, 3, 17, 33, 100};
const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> RandomVector(std::mt19937& gen, size_t n, float scale = 1.0f) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(gen);
  return v;
}

// The float result of a dot product of length k may differ from the exact one by about
// k·eps times the sum of the magnitudes of the terms (any summation order, FMA or not).
double DotTolerance(double abs_sum, int k) { return 2.0 * (k + 2) * FLT_EPSILON * abs_sum + 1e-30; }

// Runs the BLAS-backed tests with one thread and with several, so both code paths count.
class ops_blas : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { SetThreadCount(GetParam()); }
  void TearDown() override { SetThreadCount(1); }
};

INSTANTIATE_TEST_SUITE_P(Threads, ops_blas, ::testing::Values(1, 4),
                         [](const auto& info) { return "threads" + std::to_string(info.param); });

// y[t, r] = sum_c x[t, c] · w[r, c].
TEST_P(ops_blas, LinearMatchesReference) {
  std::mt19937 gen(1);
  for (int rows : kSizes) {
    for (int cols : kSizes) {
      for (int n : kSizes) {  // n = 1 is the GEMV path, n > 1 the GEMM path
        SCOPED_TRACE(::testing::Message() << "rows " << rows << " cols " << cols << " n " << n);
        const std::vector<float> w = RandomVector(gen, static_cast<size_t>(rows) * cols);
        const std::vector<float> x = RandomVector(gen, static_cast<size_t>(n) * cols);
        // One spare slot after y must stay untouched; y itself starts as NaN to catch
        // accumulation into stale output.
        std::vector<float> y(static_cast<size_t>(n) * rows + 1, kNaN);
        y.back() = 12345.0f;
        Linear(x.data(), n, Matrix{w.data(), rows, cols}, y.data());
        for (int t = 0; t < n; ++t) {
          for (int r = 0; r < rows; ++r) {
            double exact = 0, abs_sum = 0;
            for (int c = 0; c < cols; ++c) {
              const double term = double{x[t * cols + c]} * w[r * cols + c];
              exact += term;
              abs_sum += std::fabs(term);
            }
            ASSERT_NEAR(y[t * rows + r], exact, DotTolerance(abs_sum, cols)) << "t " << t << " r " << r;
          }
        }
        EXPECT_EQ(y.back(), 12345.0f) << "wrote past the output";
      }
    }
  }
}

// Fills a row-major [rows, width] matrix with row stride ld >= width: random values in the
// rows, NaN in the padding so that any read of it poisons the result.
std::vector<float> StridedMatrix(std::mt19937& gen, int rows, int width, int ld) {
  std::vector<float> m(static_cast<size_t>(rows) * ld, kNaN);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < width; ++c) m[static_cast<size_t>(r) * ld + c] = normal(gen);
  }
  return m;
}

// c[i, j] = alpha · sum_l a[i, l] · b[j, l], with every matrix at its own row stride.
TEST_P(ops_blas, MatMulTransposedMatchesReferenceWithStrides) {
  std::mt19937 gen(2);
  constexpr float kSentinel = -777.0f;
  for (int m : kSizes) {
    for (int n : kSizes) {
      for (int k : kSizes) {
        const int lda = k + 5, ldb = k + 3, ldc = n + 7;
        const float alpha = (m + n + k) % 2 == 0 ? 1.0f : 0.125f;
        SCOPED_TRACE(::testing::Message() << "m " << m << " n " << n << " k " << k << " alpha " << alpha);
        const std::vector<float> a = StridedMatrix(gen, m, k, lda);
        const std::vector<float> b = StridedMatrix(gen, n, k, ldb);
        // The results start as NaN (must be overwritten, not accumulated into); the
        // padding holds a sentinel that must survive.
        std::vector<float> c(static_cast<size_t>(m) * ldc, kSentinel);
        for (int i = 0; i < m; ++i) {
          for (int j = 0; j < n; ++j) c[static_cast<size_t>(i) * ldc + j] = kNaN;
        }
        MatMulTransposed(m, n, k, alpha, a.data(), lda, b.data(), ldb, c.data(), ldc);
        for (int i = 0; i < m; ++i) {
          for (int j = 0; j < n; ++j) {
            double exact = 0, abs_sum = 0;
            for (int l = 0; l < k; ++l) {
              const double term = double{a[i * lda + l]} * b[j * ldb + l];
              exact += term;
              abs_sum += std::fabs(term);
            }
            ASSERT_NEAR(c[i * ldc + j], alpha * exact, alpha * DotTolerance(abs_sum, k))
                << "i " << i << " j " << j;
          }
          for (int j = n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], kSentinel) << "padding overwritten";
        }
      }
    }
  }
}

// c[i, j] = sum_l a[i, l] · b[l, j], with every matrix at its own row stride.
TEST_P(ops_blas, MatMulMatchesReferenceWithStrides) {
  std::mt19937 gen(3);
  constexpr float kSentinel = -777.0f;
  for (int m : kSizes) {
    for (int n : kSizes) {
      for (int k : kSizes) {
        const int lda = k + 2, ldb = n + 9, ldc = n + 1;
        SCOPED_TRACE(::testing::Message() << "m " << m << " n " << n << " k " << k);
        const std::vector<float> a = StridedMatrix(gen, m, k, lda);
        const std::vector<float> b = StridedMatrix(gen, k, n, ldb);
        std::vector<float> c(static_cast<size_t>(m) * ldc, kSentinel);
        for (int i = 0; i < m; ++i) {
          for (int j = 0; j < n; ++j) c[static_cast<size_t>(i) * ldc + j] = kNaN;
        }
        MatMul(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
        for (int i = 0; i < m; ++i) {
          for (int j = 0; j < n; ++j) {
            double exact = 0, abs_sum = 0;
            for (int l = 0; l < k; ++l) {
              const double term = double{a[i * lda + l]} * b[l * ldb + j];
              exact += term;
              abs_sum += std::fabs(term);
            }
            ASSERT_NEAR(c[i * ldc + j], exact, DotTolerance(abs_sum, k)) << "i " << i << " j " << j;
          }
          for (int j = n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], kSentinel) << "padding overwritten";
        }
      }
    }
  }
}

// The attention product as the transformer uses it: scores = q · Kᵀ over a strided cache.
TEST_P(ops_blas, MatMulTransposedWithAlphaOnlyScales) {
  std::mt19937 gen(4);
  const int m = 3, n = 17, k = 33;
  const std::vector<float> a = StridedMatrix(gen, m, k, k);
  const std::vector<float> b = StridedMatrix(gen, n, k, k);
  std::vector<float> one(m * n), eighth(m * n);
  MatMulTransposed(m, n, k, 1.0f, a.data(), k, b.data(), k, one.data(), n);
  MatMulTransposed(m, n, k, 0.125f, a.data(), k, b.data(), k, eighth.data(), n);
  for (int i = 0; i < m * n; ++i) EXPECT_FLOAT_EQ(eighth[i], one[i] * 0.125f) << i;
}

// The KV cache's products with keys and values stored as f16 or q8_0: the same as the
// float32 products of what the type decodes to, on one row and a group's few (decode,
// read as stored: q8_0 keys also quantize the query, hence its looser bound) and on many
// (prefill). 130 rows of 64 cross the 64-row tiles the few-row MatMul decodes at a time.
TEST(ops, TypedCacheProductsMatchTheirFloat32Products) {
  std::mt19937 gen(6);
  const int k = 64;
  for (WeightType type : {WeightType::kF32, WeightType::kF16, WeightType::kQ8_0}) {
    for (int m : {1, 3, kFewRows + 4}) {
      for (int n : {1, 5, 130}) {
        SCOPED_TRACE(::testing::Message() << "type " << static_cast<int>(type) << " m " << m << " n " << n);
        const std::vector<float> a = StridedMatrix(gen, m, n > k ? n : k, n > k ? n : k);
        const std::vector<float> b = StridedMatrix(gen, n, k, k);
        std::string stored;
        FromFloat32(type, b.data(), int64_t{n} * k, &stored);
        std::vector<float> decoded(b.size());
        ToFloat32(type, stored.data(), int64_t{n} * k, decoded.data());
        const Matrix typed{stored.data(), n, k, type};
        const int lda = n > k ? n : k;

        std::vector<float> got(m * n, kNaN), want(m * n);
        MatMulTransposed(m, 0.5f, a.data(), lda, typed, got.data(), n);
        MatMulTransposed(m, n, k, 0.5f, a.data(), lda, decoded.data(), k, want.data(), n);
        const double scores_tolerance = type == WeightType::kQ8_0 && m <= kFewRows ? 2e-2 : 1e-5;
        for (int i = 0; i < m * n; ++i) {
          double abs_sum = 0;
          for (int l = 0; l < k; ++l) abs_sum += std::fabs(a[i / n * lda + l] * decoded[i % n * k + l]);
          ASSERT_NEAR(got[i], want[i], 0.5 * scores_tolerance * abs_sum + 1e-6) << "scores " << i;
        }

        // out[m, k] = weights[m, n] · values[n, k]
        std::vector<float> out(m * k, kNaN), out_want(m * k);
        MatMul(m, a.data(), lda, typed, out.data(), k);
        MatMul(m, k, n, a.data(), lda, decoded.data(), k, out_want.data(), k);
        for (int i = 0; i < m * k; ++i) {
          double abs_sum = 0;
          for (int l = 0; l < n; ++l) abs_sum += std::fabs(a[i / k * lda + l] * decoded[l * k + i % k]);
          ASSERT_NEAR(out[i], out_want[i], 1e-5 * abs_sum + 1e-6) << "out " << i;
        }
      }
    }
  }
}

// out = w · x / sqrt(mean(x²) + eps).
TEST(ops, RmsNormMatchesReference) {
  std::mt19937 gen(5);
  for (int n : kSizes) {
    for (float eps : {1e-5f, 1e-6f, 0.5f}) {
      for (float scale : {1.0f, 1e-3f, 300.0f}) {
        SCOPED_TRACE(::testing::Message() << "n " << n << " eps " << eps << " scale " << scale);
        const std::vector<float> x = RandomVector(gen, n, scale);
        const std::vector<float> w = RandomVector(gen, n);
        std::vector<float> out(n + 1, kNaN);
        out[n] = 42.0f;
        RmsNorm(out.data(), x.data(), w.data(), n, eps);
        double ss = 0;
        for (int i = 0; i < n; ++i) ss += double{x[i]} * x[i];
        const double inv_rms = 1.0 / std::sqrt(ss / n + eps);
        for (int i = 0; i < n; ++i) {
          const double exact = w[i] * (x[i] * inv_rms);
          ASSERT_NEAR(out[i], exact, 1e-5 * std::fabs(exact) + 1e-30) << i;
        }
        EXPECT_EQ(out[n], 42.0f);

        // In place (out == x) gives the same result.
        std::vector<float> in_place = x;
        RmsNorm(in_place.data(), in_place.data(), w.data(), n, eps);
        for (int i = 0; i < n; ++i) ASSERT_EQ(in_place[i], out[i]) << i;
      }
    }
  }
}

TEST(ops, RmsNormOfZerosIsZeros) {
  std::vector<float> x(17, 0.0f), w(17, 1.0f), out(17, kNaN);
  RmsNorm(out.data(), x.data(), w.data(), 17, 1e-5f);
  for (float v : out) EXPECT_EQ(v, 0.0f);
}

std::vector<double> ReferenceSoftmax(const std::vector<float>& x) {
  double max = -std::numeric_limits<double>::infinity();
  for (float v : x) max = std::max(max, double{v});
  std::vector<double> p(x.size());
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) sum += p[i] = std::exp(x[i] - max);
  for (double& v : p) v /= sum;
  return p;
}

void ExpectSoftmaxMatches(const std::vector<float>& input) {
  std::vector<float> x = input;
  x.push_back(99.0f);  // beyond n: must stay untouched
  Softmax(x.data(), static_cast<int>(input.size()));
  EXPECT_EQ(x.back(), 99.0f);
  const std::vector<double> p = ReferenceSoftmax(input);
  double sum = 0;
  for (size_t i = 0; i < input.size(); ++i) {
    ASSERT_TRUE(std::isfinite(x[i])) << i;
    ASSERT_GE(x[i], 0.0f);
    // expf is within an ulp or two; the float sum of n terms adds up to about n·eps.
    ASSERT_NEAR(x[i], p[i], 2.0 * (input.size() + 4) * FLT_EPSILON * p[i] + 1e-12) << i;
    sum += x[i];
  }
  EXPECT_NEAR(sum, 1.0, 1e-5);
}

TEST(ops, SoftmaxMatchesReferenceAndSumsToOne) {
  std::mt19937 gen(6);
  for (int n : kSizes) {
    for (float scale : {0.1f, 1.0f, 10.0f}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " scale " << scale);
      ExpectSoftmaxMatches(RandomVector(gen, n, scale));
    }
  }
}

TEST(ops, SoftmaxOfLargeValuesDoesNotOverflow) {
  // exp(1000) overflows float and double; softmax is shift-invariant, so these equal the
  // softmax of {2, 1, 0}.
  std::vector<float> x = {1000.0f, 999.0f, 998.0f};
  Softmax(x.data(), 3);
  const std::vector<double> p = ReferenceSoftmax({2.0f, 1.0f, 0.0f});
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(x[i], p[i], 1e-6) << i;

  ExpectSoftmaxMatches({1000.0f, 999.0f, 998.0f, -1000.0f});
  ExpectSoftmaxMatches({-1000.0f, -1001.0f, -1003.5f});
  ExpectSoftmaxMatches({3e38f, 3e38f});
  ExpectSoftmaxMatches({88.0f, 89.0f, 90.0f, 500.0f});

  // A masked (-inf) entry gets probability 0.
  std::vector<float> masked = {0.0f, -std::numeric_limits<float>::infinity(), 0.0f};
  Softmax(masked.data(), 3);
  EXPECT_EQ(masked[1], 0.0f);
  EXPECT_FLOAT_EQ(masked[0], 0.5f);
  EXPECT_FLOAT_EQ(masked[2], 0.5f);
}

TEST(ops, SoftmaxSpecialShapes) {
  std::vector<float> one = {-123.0f};
  Softmax(one.data(), 1);
  EXPECT_EQ(one[0], 1.0f);
  std::vector<float> flat(33, 7.0f);
  Softmax(flat.data(), 33);
  for (float v : flat) EXPECT_FLOAT_EQ(v, 1.0f / 33);
}

// gate = gate · sigmoid(gate) · up.
TEST(ops, SwiGluMatchesReference) {
  std::mt19937 gen(7);
  for (int n : kSizes) {
    for (float scale : {0.5f, 3.0f, 40.0f}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " scale " << scale);
      const std::vector<float> g = RandomVector(gen, n, scale);
      const std::vector<float> u = RandomVector(gen, n);
      std::vector<float> gate = g;
      gate.push_back(5.0f);
      SwiGlu(gate.data(), u.data(), n);
      EXPECT_EQ(gate.back(), 5.0f);
      for (int i = 0; i < n; ++i) {
        const double exact = g[i] / (1.0 + std::exp(-double{g[i]})) * u[i];
        ASSERT_NEAR(gate[i], exact, 1e-6 * std::fabs(exact) + 1e-30) << "g " << g[i] << " u " << u[i];
      }
    }
  }
}

TEST(ops, SwiGluAtTheExtremes) {
  // silu(0) = 0; silu(x) -> x for large x and -> 0 for very negative x, without NaN.
  std::vector<float> gate = {0.0f, 100.0f, -100.0f, 20.0f, -20.0f};
  const std::vector<float> up = {3.0f, 2.0f, 2.0f, 1.0f, 1.0f};
  SwiGlu(gate.data(), up.data(), 5);
  EXPECT_EQ(gate[0], 0.0f);
  EXPECT_FLOAT_EQ(gate[1], 200.0f);
  EXPECT_NEAR(gate[2], 0.0f, 1e-30);
  EXPECT_FLOAT_EQ(gate[3], static_cast<float>(20.0 / (1.0 + std::exp(-20.0))));
  EXPECT_NEAR(gate[4], -20.0 / (1.0 + std::exp(20.0)), 1e-12);
  for (float v : gate) EXPECT_FALSE(std::isnan(v));
}

// x += y.
TEST(ops, AddInPlaceMatchesReference) {
  std::mt19937 gen(8);
  for (int n : kSizes) {
    const std::vector<float> x0 = RandomVector(gen, n, 5.0f);
    const std::vector<float> y = RandomVector(gen, n, 0.01f);
    std::vector<float> x = x0;
    x.push_back(-1.0f);
    AddInPlace(x.data(), y.data(), n);
    EXPECT_EQ(x.back(), -1.0f);
    for (int i = 0; i < n; ++i) {
      EXPECT_FLOAT_EQ(x[i], static_cast<float>(double{x0[i]} + y[i])) << "n " << n << " i " << i;
    }
  }
  // Adding a vector to itself doubles it exactly.
  std::vector<float> z = {1.5f, -2.25f, 3e-20f};
  AddInPlace(z.data(), z.data(), 3);
  EXPECT_EQ(z, (std::vector<float>{3.0f, -4.5f, 6e-20f}));
}

}  // namespace
}  // namespace toyllm
