// The GEMV and dequantising kernels of every instruction set this machine has, against the
// scalar reference; and Linear (thread pool slices, dequantised tiles for GEMM) on every
// weight type against a double-precision product of the same dequantised weights.
#include <cfloat>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cpu_features.h"
#include "runtime/kernels/dequantize.h"
#include "runtime/kernels/gemv.h"
#include "runtime/ops.h"
#include "runtime/weight_convert.h"

namespace toyllm {
namespace {

constexpr WeightType kTypes[] = {WeightType::kF32, WeightType::kF16, WeightType::kBF16,
                                 WeightType::kQ8_0};

// Ragged widths: none a multiple of 64 floats but 1024, tails of every kind for the 8- and
// 16-wide paths. Q8_0 rows are whole blocks by format, so its widths are multiples of 32.
constexpr int kWidths[] = {1, 7, 8, 15, 16, 17, 33, 100, 288, 1024};
constexpr int kQ8Widths[] = {32, 64, 96, 288, 1024};

std::vector<float> RandomVector(std::mt19937& gen, size_t n) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(gen);
  return v;
}

// A weight matrix stored as `type`, 4 bytes off the vector width and the cache line:
// GGUF promises only 32-byte tensor starts (and element alignment), so the kernels must
// not need more. Element alignment itself holds, as UBSan requires. Also returns the weights dequantised.
struct TypedMatrix {
  std::string bytes;
  std::vector<float> floats;
  Matrix view;
};

TypedMatrix MakeMatrix(std::mt19937& gen, WeightType type, int rows, int cols) {
  TypedMatrix m;
  const std::vector<float> values = RandomVector(gen, static_cast<size_t>(rows) * cols);
  m.bytes = "xxxx";
  FromFloat32(type, values.data(), static_cast<int64_t>(values.size()), &m.bytes);
  m.floats.resize(values.size());
  ToFloat32(type, m.bytes.data() + 4, static_cast<int64_t>(values.size()), m.floats.data());
  m.view = Matrix{m.bytes.data() + 4, rows, cols, type};
  return m;
}

// Two float sums of the same k terms in different orders (with or without FMA, Q8_0 blocks
// scaled before or after summing) each lie within about k·eps·Σ|term| of the exact sum;
// the weights are decoded exactly in both, so that bounds their difference too.
double Tolerance(const std::vector<float>& w, const float* x, int cols) {
  double abs_sum = 0;
  for (int c = 0; c < cols; ++c) abs_sum += std::fabs(double{w[c]} * x[c]);
  return 2.0 * (cols + 2) * FLT_EPSILON * abs_sum + 1e-30;
}

TEST(kernels, EveryGemvPathMatchesTheScalarReference) {
  std::mt19937 gen(5);
  std::vector<CpuLevel> levels = {CpuLevel::kScalar};
  if (DetectedCpuLevel() >= CpuLevel::kAvx2) levels.push_back(CpuLevel::kAvx2);
  if (DetectedCpuLevel() >= CpuLevel::kAvx512) levels.push_back(CpuLevel::kAvx512);
  for (WeightType type : kTypes) {
    const bool q8 = type == WeightType::kQ8_0;
    for (int cols : q8 ? std::vector<int>(std::begin(kQ8Widths), std::end(kQ8Widths))
                       : std::vector<int>(std::begin(kWidths), std::end(kWidths))) {
      for (int rows : {1, 5, 37}) {
        const TypedMatrix w = MakeMatrix(gen, type, rows, cols);
        const std::vector<float> x = RandomVector(gen, cols);
        std::vector<float> expected(rows);
        GemvScalar(w.view, x.data(), 0, rows, expected.data());
        for (CpuLevel level : levels) {
          SCOPED_TRACE(::testing::Message() << "type " << static_cast<int>(type) << " level "
                                            << CpuLevelName(level) << " [" << rows << ", " << cols << "]");
          // Rows outside [1, rows - 1) must stay untouched.
          std::vector<float> y(rows, 777.0f);
          GemvFor(level)(w.view, x.data(), rows > 2 ? 1 : 0, rows > 2 ? rows - 1 : rows, y.data());
          for (int r = 0; r < rows; ++r) {
            if (rows > 2 && (r == 0 || r == rows - 1)) {
              EXPECT_EQ(y[r], 777.0f) << "row " << r << " is outside the range";
              continue;
            }
            const std::vector<float> row(w.floats.begin() + r * cols, w.floats.begin() + (r + 1) * cols);
            ASSERT_NEAR(y[r], expected[r], Tolerance(row, x.data(), cols)) << "row " << r;
          }
        }
      }
    }
  }
}

// The conversions are exact, so the vector path must equal the scalar one bit for bit.
TEST(kernels, DequantizeEqualsTheScalarConversion) {
  std::mt19937 gen(7);
  for (WeightType type : kTypes) {
    for (int n : {32, 96, 1024}) {
      for (int extra : {0, 1, 7}) {  // ragged tails, for the types that allow them
        const int count = type == WeightType::kQ8_0 ? n : n + extra;
        const TypedMatrix m = MakeMatrix(gen, type, 1, count);
        std::vector<float> out(count, NAN);
        Dequantize(type, m.view.data, count, out.data());
        EXPECT_EQ(out, m.floats) << "type " << static_cast<int>(type) << " n " << count;
      }
    }
  }
}

// Shapes large enough for the pool to split the rows, and for GEMM to take Q8_0/f16/bf16
// rows in several dequantised tiles (a tile is ~256k floats: 256 rows of 1024).
TEST(kernels, LinearOnEveryTypeAndThreadCountMatchesDequantisedWeights) {
  std::mt19937 gen(6);
  for (int threads : {1, 2, 3}) {
    SetThreadCount(threads);
    for (WeightType type : kTypes) {
      for (auto [rows, cols] : {std::pair{600, 1024}, std::pair{1000, 288}, std::pair{48, 32}}) {
        const TypedMatrix w = MakeMatrix(gen, type, rows, cols);
        for (int n : {1, 5}) {
          SCOPED_TRACE(::testing::Message() << "threads " << threads << " type "
                                            << static_cast<int>(type) << " [" << rows << ", "
                                            << cols << "] n " << n);
          const std::vector<float> x = RandomVector(gen, static_cast<size_t>(n) * cols);
          std::vector<float> y(static_cast<size_t>(n) * rows + 1, NAN);
          y.back() = 12345.0f;
          Linear(x.data(), n, w.view, y.data());
          for (int t = 0; t < n; ++t) {
            for (int r = 0; r < rows; ++r) {
              const std::vector<float> row(w.floats.begin() + r * cols, w.floats.begin() + (r + 1) * cols);
              double exact = 0;
              for (int c = 0; c < cols; ++c) exact += double{row[c]} * x[t * cols + c];
              ASSERT_NEAR(y[t * rows + r], exact, Tolerance(row, &x[t * cols], cols)) << "t " << t << " r " << r;
            }
          }
          EXPECT_EQ(y.back(), 12345.0f) << "wrote past the output";
        }
      }
    }
  }
  SetThreadCount(1);
}

}  // namespace
}  // namespace toyllm
