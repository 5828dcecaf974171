// The vector softmax of every instruction set this machine has, against the scalar
// reference (libm's expf) and against a double-precision softmax, on the lengths and value
// ranges attention and the sampler give it.
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cpu_features.h"
#include "runtime/kernels/softmax.h"
#include "tests/kernel_test_util.h"

namespace toyllm {
namespace {

using testing::VectorLevels;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Runs `kernel` on x with a sentinel after the n entries, which must stay untouched.
std::vector<float> Apply(SoftmaxKernel kernel, std::vector<float> x) {
  const size_t n = x.size();
  x.push_back(99.0f);
  kernel(x.data(), static_cast<int>(n));
  EXPECT_EQ(x.back(), 99.0f) << "wrote past the end";
  x.pop_back();
  return x;
}

void ExpectMatchesScalar(const std::vector<float>& input) {
  const std::vector<float> expected = Apply(SoftmaxScalar, input);
  // The exact weights of the float differences x − max, which both kernels compute first
  // (exactly rounded): the rest of the error is the kernels' own.
  float max = -kInf;
  for (float v : input) max = std::max(max, v);
  std::vector<double> exact(input.size());
  double exact_sum = 0;
  for (size_t i = 0; i < input.size(); ++i) exact_sum += exact[i] = std::exp(double{input[i] - max});
  for (double& e : exact) e /= exact_sum;
  for (CpuLevel level : VectorLevels()) {
    SCOPED_TRACE(::testing::Message() << CpuLevelName(level) << " n " << input.size());
    const std::vector<float> got = Apply(SoftmaxFor(level), input);
    float sum = 0;
    for (size_t i = 0; i < input.size(); ++i) {
      // Both within a few ulp of the exact weight (the float sums differ in their order);
      // weights below 1e-37 may be flushed to 0.
      const double tolerance = (8.0 + 0.5 * std::sqrt(input.size())) * FLT_EPSILON * exact[i] + 1e-37;
      ASSERT_NEAR(got[i], exact[i], tolerance) << i << " of input " << input[i];
      ASSERT_NEAR(expected[i], exact[i], tolerance) << "the scalar reference, " << i;
      sum += got[i];
    }
    EXPECT_NEAR(sum, 1.0f, 1e-5f);
  }
}

TEST(softmax_kernel, EveryLengthAndScaleMatchesTheScalarReference) {
  std::mt19937 gen(11);
  for (int n : {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 255, 4096, 4099, 32000}) {
    for (float scale : {0.01f, 1.0f, 10.0f, 60.0f}) {
      std::normal_distribution<float> value(0.0f, scale);
      std::vector<float> x(n);
      for (float& v : x) v = value(gen);
      ExpectMatchesScalar(x);
    }
  }
}

TEST(softmax_kernel, TheExponentialHoldsAcrossItsWholeRange) {
  // x − max from 0 down past −87.3, where the weights leave float's normal range.
  std::vector<float> x;
  for (float v = 0.0f; v > -100.0f; v -= 0.0371f) x.push_back(v);
  ExpectMatchesScalar(x);
  for (CpuLevel level : VectorLevels()) {
    const std::vector<float> got = Apply(SoftmaxFor(level), {0.0f, -87.0f, -88.0f, -1000.0f, -kInf});
    EXPECT_GT(got[1], 0.0f) << CpuLevelName(level);
    EXPECT_EQ(got[3], 0.0f) << CpuLevelName(level);
    EXPECT_EQ(got[4], 0.0f) << CpuLevelName(level) << ": a masked key gets weight 0";
  }
}

TEST(softmax_kernel, ExtremesBehaveAsTheScalarReference) {
  ExpectMatchesScalar({1000.0f, 999.0f, 998.0f, -1000.0f});
  ExpectMatchesScalar({3e38f, 3e38f, -3e38f});
  ExpectMatchesScalar({-kInf, 0.0f, -kInf, 1.0f, -kInf, -kInf, -kInf, -kInf, -kInf, 2.0f});
  for (CpuLevel level : VectorLevels()) {
    // A NaN anywhere, in the vector body or the tail, makes every weight NaN, as in scalar.
    for (int at : {0, 3, 8, 10}) {
      std::vector<float> x(11, 0.5f);
      x[at] = std::numeric_limits<float>::quiet_NaN();
      for (float v : Apply(SoftmaxFor(level), x)) EXPECT_TRUE(std::isnan(v)) << CpuLevelName(level) << " at " << at;
    }
  }
}

}  // namespace
}  // namespace toyllm
