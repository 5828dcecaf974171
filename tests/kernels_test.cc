// The GEMV and dequantising kernels of every instruction set this machine has, against the
// scalar reference; and Linear (thread pool slices, dequantised tiles for GEMM) on every
// weight type against a double-precision product of the same dequantised weights.
#include <algorithm>
#include <cfloat>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/ggml_type.h"
#include "runtime/cpu_features.h"
#include "runtime/kernels/dequantize.h"
#include "runtime/kernels/gemm_bf16.h"
#include "runtime/kernels/gemv.h"
#include "runtime/kernels/quantize_activations.h"
#include "runtime/ops.h"
#include "runtime/weight_convert.h"
#include "tests/kernel_test_util.h"

namespace toyllm {
namespace {

using testing::MakeMatrix;
using testing::RandomVector;
using testing::TypedMatrix;

constexpr WeightType kTypes[] = {
    WeightType::kF32,  WeightType::kF16,  WeightType::kBF16, WeightType::kQ8_0,
    WeightType::kQ4_0, WeightType::kQ4_1, WeightType::kQ5_0, WeightType::kQ5_1,
    WeightType::kQ2_K, WeightType::kQ3_K, WeightType::kQ4_K, WeightType::kQ5_K,
    WeightType::kQ6_K, WeightType::kIQ4_NL};

// Ragged widths: none a multiple of 64 floats but 1024, tails of every kind for the 8- and
// 16-wide paths. Block-quantized rows are whole blocks by format, so their widths are
// multiples of 32 or (K-quants) 256.
constexpr int kWidths[] = {1, 7, 8, 15, 16, 17, 33, 100, 288, 1024};
constexpr int kBlockWidths[] = {32, 64, 96, 288, 1024};
constexpr int kSuperBlockWidths[] = {256, 512, 768, 2048};

std::vector<int> WidthsFor(WeightType type) {
  if (IsKQuant(type)) return {std::begin(kSuperBlockWidths), std::end(kSuperBlockWidths)};
  if (IsBlockQuantized(type)) return {std::begin(kBlockWidths), std::end(kBlockWidths)};
  return {std::begin(kWidths), std::end(kWidths)};
}

// An activation row quantized as the GEMV of `type` needs it.
struct QuantizedInput {
  std::vector<ActivationBlock> blocks;
  std::vector<ActivationBlockK> k_blocks;
  GemvInput input;
};

QuantizedInput Quantize(WeightType type, const std::vector<float>& x) {
  QuantizedInput q;
  const int n = static_cast<int>(x.size());
  q.input.values = x.data();
  if (IsKQuant(type)) {
    q.k_blocks.resize(n / kSuperBlock);
    QuantizeActivationsK(x.data(), n, q.k_blocks.data());
    q.input.k_blocks = q.k_blocks.data();
  } else if (IsBlockQuantized(type)) {
    q.blocks.resize(n / kQ8Block);
    QuantizeActivations(x.data(), n, q.blocks.data());
    q.input.blocks = q.blocks.data();
  }
  return q;
}

// Two float sums of the same k terms in different orders (with or without FMA, Q8_0 blocks
// scaled before or after summing) each lie within about k·eps·Σ|term| of the exact sum;
// the weights are decoded exactly in both, so that bounds their difference too.
double Tolerance(const std::vector<float>& w, const float* x, int cols) {
  double abs_sum = 0;
  for (int c = 0; c < cols; ++c) abs_sum += std::fabs(double{w[c]} * x[c]);
  return 2.0 * (cols + 2) * FLT_EPSILON * abs_sum + 1e-30;
}

// x as the Q8_0 GEMV sees it: each value rounded to its block's int8 grid.
std::vector<float> QuantizedValues(const std::vector<float>& x) {
  std::vector<ActivationBlock> blocks(x.size() / kQ8Block);
  QuantizeActivations(x.data(), static_cast<int>(x.size()), blocks.data());
  std::vector<float> values(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    values[i] = blocks[i / kQ8Block].q[i % kQ8Block] * blocks[i / kQ8Block].scale;
  }
  return values;
}

// x as the GEMV of `type` sees it (rows of `cols`): itself for float weights, rounded to
// 32-blocks for the legacy types, to 256-blocks (Q8_K) for the K-quants.
std::vector<float> SeenBy(WeightType type, const std::vector<float>& x, int cols) {
  if (!IsBlockQuantized(type)) return x;
  if (!IsKQuant(type)) return QuantizedValues(x);
  std::vector<float> values(x.size());
  for (size_t start = 0; start < x.size(); start += cols) {
    std::vector<ActivationBlockK> blocks(cols / kSuperBlock);
    QuantizeActivationsK(x.data() + start, cols, blocks.data());
    for (int i = 0; i < cols; ++i) values[start + i] = blocks[i / kSuperBlock].q[i % kSuperBlock] * blocks[i / kSuperBlock].scale;
  }
  return values;
}

// The values as the bf16 GEMM multiplies them.
std::vector<float> RoundedToBf16(const std::vector<float>& x) {
  std::vector<uint32_t> pairs(x.size() / 2);
  RoundToBf16PairsScalar(x.data(), static_cast<int64_t>(x.size()), pairs.data());
  std::vector<float> values(x.size());
  for (size_t i = 0; i < x.size(); ++i) values[i] = Bf16ToFloat(pairs[i / 2] >> (16 * (i % 2)) & 0xFFFF);
  return values;
}

TEST(kernels, QuantizedActivationsAreWithinHalfAStepOfTheirBlockMaximum) {
  std::mt19937 gen(8);
  std::vector<float> x = RandomVector(gen, 4 * kQ8Block);
  std::fill(x.begin() + kQ8Block, x.begin() + 2 * kQ8Block, 0.0f);  // an all-zero block
  x[2 * kQ8Block + 5] = 1e30f;                                     // one huge value
  const std::vector<float> q = QuantizedValues(x);
  for (int b = 0; b < 4; ++b) {
    float amax = 0;
    for (int j = 0; j < kQ8Block; ++j) amax = std::max(amax, std::fabs(x[b * kQ8Block + j]));
    for (int j = 0; j < kQ8Block; ++j) {
      const int i = b * kQ8Block + j;
      ASSERT_LE(std::fabs(q[i] - x[i]), amax / 254 * 1.0001f) << "block " << b << " value " << j;
    }
  }
  EXPECT_NEAR(q[2 * kQ8Block + 5], 1e30f, 1e24f);  // the maximum maps to 127 steps exactly
  for (int j = 0; j < kQ8Block; ++j) EXPECT_EQ(q[kQ8Block + j], 0.0f);

  // A diverged row (NaN, infinity) quantizes to something finite instead of undefined casts.
  std::vector<float> bad(kQ8Block, 1.0f);
  bad[0] = NAN;
  bad[1] = INFINITY;
  std::vector<ActivationBlock> blocks(1);
  QuantizeActivations(bad.data(), kQ8Block, blocks.data());
  for (int j = 0; j < kQ8Block; ++j) EXPECT_LE(std::abs(int{blocks[0].q[j]}), 127);
}

TEST(kernels, EveryGemvPathMatchesTheScalarReference) {
  std::mt19937 gen(5);
  std::vector<CpuLevel> levels = {CpuLevel::kScalar};
  if (DetectedCpuLevel() >= CpuLevel::kAvx2) levels.push_back(CpuLevel::kAvx2);
  if (DetectedCpuLevel() >= CpuLevel::kAvx512) levels.push_back(CpuLevel::kAvx512);
  for (WeightType type : kTypes) {
    for (int cols : WidthsFor(type)) {
      for (int rows : {1, 5, 37}) {
        const TypedMatrix w = MakeMatrix(gen, type, rows, cols);
        const std::vector<float> x = RandomVector(gen, cols);
        std::vector<float> expected(rows);
        const QuantizedInput quantized = Quantize(type, x);
        const GemvInput& input = quantized.input;
        GemvScalar(w.view, input, 0, rows, expected.data());
        for (CpuLevel level : levels) {
          SCOPED_TRACE(::testing::Message() << "type " << static_cast<int>(type) << " level "
                                            << CpuLevelName(level) << " [" << rows << ", " << cols << "]");
          // Rows outside [1, rows - 1) must stay untouched.
          std::vector<float> y(rows, 777.0f);
          GemvFor(level)(w.view, input, rows > 2 ? 1 : 0, rows > 2 ? rows - 1 : rows, y.data());
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

// Decode splits a matrix's rows among the threads: each thread's kernel gets a slice that
// starts anywhere (not only at the 4 rows the AVX-512 kernels walk in step), on rows one
// byte off any alignment, with the other threads running beside it. Every slicing of every
// path must give exactly the one-call result, which matches the scalar reference.
TEST(kernels, EveryGemvPathOnEveryThreadCountEqualsOneCall) {
  std::mt19937 gen(13);
  std::vector<CpuLevel> levels = testing::VectorLevels();
  levels.insert(levels.begin(), CpuLevel::kScalar);
  const int rows = 45;
  for (WeightType type : kTypes) {
    const int cols = WidthsFor(type)[1];
    const TypedMatrix aligned = MakeMatrix(gen, type, rows, cols);
    std::string bytes(aligned.bytes.size() + 1, '\0');
    std::memcpy(bytes.data() + 1, aligned.view.data, WeightBytes(type, cols) * rows);
    const bool element_aligned = type == WeightType::kF32 || type == WeightType::kF16 || type == WeightType::kBF16;
    const Matrix w{element_aligned ? aligned.view.data : bytes.data() + 1, rows, cols, type};
    const std::vector<float> x = RandomVector(gen, cols);
    const QuantizedInput q = Quantize(type, x);
    std::vector<float> expected(rows);
    GemvScalar(w, q.input, 0, rows, expected.data());
    for (CpuLevel level : levels) {
      std::vector<float> whole(rows);
      GemvFor(level)(w, q.input, 0, rows, whole.data());
      for (int r = 0; r < rows; ++r) {
        const std::vector<float> row(aligned.floats.begin() + r * cols, aligned.floats.begin() + (r + 1) * cols);
        ASSERT_NEAR(whole[r], expected[r], Tolerance(row, x.data(), cols))
            << "type " << static_cast<int>(type) << " " << CpuLevelName(level) << " row " << r;
      }
      for (int threads : {2, 3, 4, 7}) {
        SetThreadCount(threads);
        std::vector<float> y(rows, NAN);
        // Uneven slices: thread i takes rows [i·rows/threads, (i+1)·rows/threads).
        ParallelFor(threads, int64_t{1} << 40, [&](int i) {
          GemvFor(level)(w, q.input, i * rows / threads, (i + 1) * rows / threads, y.data());
        });
        EXPECT_EQ(y, whole) << "type " << static_cast<int>(type) << " " << CpuLevelName(level)
                            << " threads " << threads;
      }
    }
  }
  SetThreadCount(1);
}

// Integer products at the extremes: a hand-made file may hold -128 (the quantizer never
// writes it), which the sign trick must still multiply right, and no int16 pair may saturate.
TEST(kernels, Q8_0BlocksAtTheInt8ExtremesMatchTheScalarReference) {
  // Blocks 0 and 2 all -128; blocks 1 and 3 alternate -128 and 127.
  const auto weight = [](int i) { return (i / kQ8Block) % 2 == 0 || i % 2 == 0 ? -128 : 127; };
  std::string bytes(4 * sizeof(BlockQ8_0), '\0');
  for (int b = 0; b < 4; ++b) {
    BlockQ8_0 block;
    block.scale = 0x3c00;  // 1.0 in f16
    for (int j = 0; j < kQ8Block; ++j) block.q[j] = static_cast<int8_t>(weight(b * kQ8Block + j));
    std::memcpy(&bytes[b * sizeof(BlockQ8_0)], &block, sizeof(block));
  }
  const Matrix w{bytes.data(), 1, 4 * kQ8Block, WeightType::kQ8_0};
  std::vector<float> x(4 * kQ8Block);
  for (size_t i = 0; i < x.size(); ++i) x[i] = i % 3 == 0 ? -1.0f : 1.0f;  // quantizes to ±127
  double exact = 0;  // in integers: weight · (±127), times the activation scale 1/127
  for (size_t i = 0; i < x.size(); ++i) {
    exact += weight(static_cast<int>(i)) * (x[i] > 0 ? 127 : -127) * (1.0 / 127);
  }
  std::vector<ActivationBlock> blocks(x.size() / kQ8Block);
  QuantizeActivations(x.data(), static_cast<int>(x.size()), blocks.data());
  for (CpuLevel level : {CpuLevel::kScalar, CpuLevel::kAvx2, CpuLevel::kAvx512}) {
    if (level > DetectedCpuLevel()) continue;
    float y = 0;
    GemvFor(level)(w, {x.data(), blocks.data()}, 0, 1, &y);
    EXPECT_NEAR(y, exact, 1e-3) << CpuLevelName(level);
  }
}

// Blocks of random bytes (every bit pattern a file may hold, e.g. Q6_K scales of -128,
// which the quantizer never writes) with finite scales, times activations that all
// quantize to ±127: no int16 pair may saturate, every bit must land where the scalar
// reference puts it.
TEST(kernels, RandomBlocksAtTheExtremesMatchTheScalarReference) {
  std::mt19937 gen(11);
  for (WeightType type : kTypes) {
    if (!IsBlockQuantized(type)) continue;
    const BlockShape shape = BlockShapeOf(type);
    const int cols = 4 * shape.elements, rows = 3;
    std::string bytes(1 + rows * WeightBytes(type, cols), '\0');  // misaligned by one byte
    for (int b = 0; b < rows * 4; ++b) {
      uint8_t* block = reinterpret_cast<uint8_t*>(&bytes[1 + b * shape.bytes]);
      do {
        for (int i = 0; i < shape.bytes; ++i) block[i] = static_cast<uint8_t>(gen());
      } while (FirstNonFiniteScale(type, block, 1) >= 0);
    }
    const Matrix w{bytes.data() + 1, rows, cols, type};
    std::vector<float> x(cols);
    for (int i = 0; i < cols; ++i) x[i] = (i * 7) % 3 == 0 ? -1.0f : 1.0f;
    const QuantizedInput q = Quantize(type, x);
    std::vector<float> expected(rows), floats(cols);
    GemvScalar(w, q.input, 0, rows, expected.data());
    const std::vector<float> seen = SeenBy(type, x, cols);
    for (int r = 0; r < rows; ++r) {
      ToFloat32(type, w.row(r), cols, floats.data());
      double exact = 0;
      for (int i = 0; i < cols; ++i) exact += double{floats[i]} * seen[i];
      ASSERT_NEAR(expected[r], exact, Tolerance(floats, seen.data(), cols)) << "type " << static_cast<int>(type);
    }
    for (CpuLevel level : {CpuLevel::kAvx2, CpuLevel::kAvx512}) {
      if (level > DetectedCpuLevel()) continue;
      std::vector<float> y(rows);
      GemvFor(level)(w, q.input, 0, rows, y.data());
      for (int r = 0; r < rows; ++r) {
        ToFloat32(type, w.row(r), cols, floats.data());
        EXPECT_NEAR(y[r], expected[r], Tolerance(floats, seen.data(), cols))
            << "type " << static_cast<int>(type) << " " << CpuLevelName(level);
      }
    }
  }
}

// The conversions are exact, so the vector path must equal the scalar one bit for bit.
TEST(kernels, DequantizeEqualsTheScalarConversion) {
  std::mt19937 gen(7);
  for (WeightType type : kTypes) {
    for (int n : {32, 96, 256, 1024}) {
      for (int extra : {0, 1, 7}) {  // ragged tails, for the types that allow them
        if (IsKQuant(type) && (n % kSuperBlock != 0 || extra > 0)) continue;
        const int count = IsBlockQuantized(type) ? n : n + extra;
        const TypedMatrix m = MakeMatrix(gen, type, 1, count);
        std::vector<float> out(count, NAN);
        Dequantize(type, m.view.data, count, out.data());
        EXPECT_EQ(out, m.floats) << "type " << static_cast<int>(type) << " n " << count;
      }
    }
  }
}

// Checks Linear's output y [n, w.rows] (and the guard word past it, 12345) against a
// float64 product of w's decoded values `floats` [w.rows, w.cols] with x as the path
// multiplies it: decode (one row) by x quantized, prefill by x itself, or both rounded to
// bf16. `before` holds y's values before a product that adds to them; empty, none.
void ExpectLinearProduct(const Matrix& w, const std::vector<float>& floats, const std::vector<float>& x,
                         int n, const std::vector<float>& y, const std::vector<float>& before = {}) {
  const int rows = w.rows, cols = w.cols;
  const bool bf16 = n > 1 && BatchRoundsToBf16(w);
  const std::vector<float> used = n == 1 ? SeenBy(w.type, x, cols) : bf16 ? RoundedToBf16(x) : x;
  for (int t = 0; t < n; ++t) {
    for (int r = 0; r < rows; ++r) {
      std::vector<float> row(floats.begin() + r * cols, floats.begin() + (r + 1) * cols);
      if (bf16) row = RoundedToBf16(row);
      double exact = before.empty() ? 0.0 : before[t * rows + r];
      for (int c = 0; c < cols; ++c) exact += double{row[c]} * used[t * cols + c];
      ASSERT_NEAR(y[t * rows + r], exact, Tolerance(row, &used[t * cols], cols) + (before.empty() ? 0.0 : 1e-6))
          << "t " << t << " r " << r;
    }
  }
  EXPECT_EQ(y.back(), 12345.0f) << "wrote past the output";
}

// Shapes large enough for the pool to split the rows, and for GEMM to take the weights in
// several dequantised tiles: for sgemm 512 rows × 2048 columns, so [600, 2304] is two tiles
// of rows on one thread, each row in a whole chunk and a ragged one summed through beta; for
// the bf16 kernel ~256k floats of whole rows.
TEST(kernels, LinearOnEveryTypeAndThreadCountMatchesDequantisedWeights) {
  std::mt19937 gen(6);
  for (int threads : {1, 2, 3}) {
    SetThreadCount(threads);
    for (WeightType type : kTypes) {
      const bool k = IsKQuant(type);
      for (auto [rows, cols] : {std::pair{600, 2304}, std::pair{1000, k ? 768 : 288}, std::pair{48, k ? 256 : 32}}) {
        const TypedMatrix w = MakeMatrix(gen, type, rows, cols);
        for (int n : {1, 5}) {
          SCOPED_TRACE(::testing::Message() << "threads " << threads << " type "
                                            << static_cast<int>(type) << " [" << rows << ", "
                                            << cols << "] n " << n);
          const std::vector<float> x = RandomVector(gen, static_cast<size_t>(n) * cols);
          std::vector<float> y(static_cast<size_t>(n) * rows + 1, NAN);
          y.back() = 12345.0f;
          Linear(x.data(), n, w.view, y.data());
          ExpectLinearProduct(w.view, w.floats, x, n, y);
        }
      }
    }
  }
  SetThreadCount(1);
}

// A slice of a wider matrix's columns (the feed-forward layer's W2, a slice of hidden
// units at a time) reads each row from its own start, stride bytes apart, on every path:
// GEMV, sgemm on float32 in place and on decoded tiles, the bf16 GEMM; and each slice's
// product is added to the ones before.
TEST(kernels, LinearOnAColumnSliceAddsTheProductOfThoseColumns) {
  std::mt19937 gen(14);
  for (int threads : {1, 2}) {
    SetThreadCount(threads);
    for (WeightType type : kTypes) {
      const int rows = 600, cols = 4 * kSuperBlock, first = kSuperBlock, width = 2 * kSuperBlock;
      const TypedMatrix w = MakeMatrix(gen, type, rows, cols);
      const Matrix slice = Columns(w.view, first, width);
      ASSERT_FALSE(slice.packed());
      std::vector<float> sliced;  // the slice's values, packed
      for (int r = 0; r < rows; ++r) {
        sliced.insert(sliced.end(), w.floats.begin() + r * cols + first, w.floats.begin() + r * cols + first + width);
      }
      for (int n : {1, 5}) {
        SCOPED_TRACE(::testing::Message() << "threads " << threads << " type " << static_cast<int>(type) << " n " << n);
        const std::vector<float> x = RandomVector(gen, static_cast<size_t>(n) * width);
        std::vector<float> y(static_cast<size_t>(n) * rows + 1);
        for (size_t i = 0; i < y.size(); ++i) y[i] = 0.25f * (i % 7);
        y.back() = 12345.0f;
        const std::vector<float> before = y;
        Linear(x.data(), n, {{slice, y.data(), /*add=*/true}});
        ExpectLinearProduct(slice, sliced, x, n, y, before);
      }
    }
  }
  SetThreadCount(1);
}

// Bf16 rows that start two bytes off a whole pair (a GGUF may align tensors to 2 only) give
// the same batch product as the same rows aligned: the bf16 kernel must not read them as
// 32-bit pairs in place (x86 would read them all the same: the sanitizer build checks it).
TEST(kernels, LinearOnMisalignedBf16RowsEqualsAligned) {
  std::mt19937 gen(12);
  const int rows = 40, cols = 64, n = 5;
  const TypedMatrix aligned = MakeMatrix(gen, WeightType::kBF16, rows, cols);
  std::string bytes(aligned.bytes.size() + 8, '\0');
  char* start = bytes.data() + (6 - reinterpret_cast<uintptr_t>(bytes.data()) % 4);  // ≡ 2 mod 4
  std::memcpy(start, aligned.view.data, static_cast<size_t>(rows) * cols * 2);
  const Matrix misaligned{start, rows, cols, WeightType::kBF16};
  const std::vector<float> x = RandomVector(gen, static_cast<size_t>(n) * cols);
  std::vector<float> want(n * rows), got(n * rows);
  Linear(x.data(), n, aligned.view, want.data());
  Linear(x.data(), n, misaligned, got.data());
  EXPECT_EQ(got, want);
}

// Layers that share an input, split among the threads together: slices cross from one
// matrix into the next (rows of 40, 24 and 600 are not multiples of the slice size), and
// the types may differ. Each output must equal the layer computed alone: bit for bit for
// one row (each GEMV row is computed alone anyway); for a batch within rounding, since
// sgemm may order its sums by where a slice of rows starts.
TEST(kernels, LinearOnSeveralLayersEqualsEachLayerAlone) {
  std::mt19937 gen(9);
  const int cols = 256;
  const TypedMatrix a = MakeMatrix(gen, WeightType::kQ8_0, 40, cols);
  const TypedMatrix b = MakeMatrix(gen, WeightType::kF16, 24, cols);
  const TypedMatrix c = MakeMatrix(gen, WeightType::kQ8_0, 600, cols);
  for (int threads : {1, 2, 3}) {
    SetThreadCount(threads);
    for (int n : {1, 5}) {
      SCOPED_TRACE(::testing::Message() << "threads " << threads << " n " << n);
      const std::vector<float> x = RandomVector(gen, static_cast<size_t>(n) * cols);
      std::vector<float> ya(n * 40, NAN), yb(n * 24, NAN), yc(n * 600, NAN);
      Linear(x.data(), n, {{a.view, ya.data()}, {b.view, yb.data()}, {c.view, yc.data()}});
      std::vector<float> alone_a(n * 40), alone_b(n * 24), alone_c(n * 600);
      Linear(x.data(), n, a.view, alone_a.data());
      Linear(x.data(), n, b.view, alone_b.data());
      Linear(x.data(), n, c.view, alone_c.data());
      for (auto [together, alone] : {std::pair{&ya, &alone_a}, std::pair{&yb, &alone_b}, std::pair{&yc, &alone_c}}) {
        if (n == 1) {
          EXPECT_EQ(*together, *alone);
          continue;
        }
        for (size_t i = 0; i < alone->size(); ++i) {
          ASSERT_NEAR((*together)[i], (*alone)[i], 1e-5f * (1 + std::fabs((*alone)[i]))) << i;
        }
      }
    }
  }
  SetThreadCount(1);
}

}  // namespace
}  // namespace toyllm
