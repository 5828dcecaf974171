// The vector SwiGLU of every instruction set this machine has, against silu(g) · up in
// double precision, on the widths of real feed-forward layers and their ragged tails, and
// at the ends of the exponential's range where a naive exp(−g) would overflow.
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cpu_features.h"
#include "runtime/kernels/swiglu.h"
#include "tests/kernel_test_util.h"

namespace toyllm {
namespace {

using testing::VectorLevels;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<SwiGluKernel> EveryKernel() {
  std::vector<SwiGluKernel> kernels = {SwiGluScalar};
  for (CpuLevel level : VectorLevels()) kernels.push_back(SwiGluFor(level));
  return kernels;
}

// Runs `kernel` with a sentinel after the n gates, which must stay untouched.
std::vector<float> Apply(SwiGluKernel kernel, std::vector<float> gate, const std::vector<float>& up) {
  const size_t n = gate.size();
  gate.push_back(99.0f);
  kernel(gate.data(), up.data(), static_cast<int>(n));
  EXPECT_EQ(gate.back(), 99.0f) << "wrote past the end";
  gate.pop_back();
  return gate;
}

double Exact(float g, float up) { return g / (1.0 + std::exp(-double{g})) * up; }

void ExpectExact(const std::vector<float>& gate, const std::vector<float>& up) {
  for (SwiGluKernel kernel : EveryKernel()) {
    SCOPED_TRACE(::testing::Message() << (kernel == SwiGluScalar ? "scalar" : "vector") << " n " << gate.size());
    const std::vector<float> got = Apply(kernel, gate, up);
    for (size_t i = 0; i < gate.size(); ++i) {
      const double exact = Exact(gate[i], up[i]);
      // A few roundings of float: the exponential's two ulp, a division, two products.
      // Below g ≈ −87, where sigmoid(g) leaves float's normal range, both give 0 for
      // results under 1e-34.
      ASSERT_NEAR(got[i], exact, 6 * FLT_EPSILON * std::fabs(exact) + 1e-34) << "g " << gate[i] << " up " << up[i];
    }
  }
}

TEST(swiglu_kernel, EveryWidthAndScaleIsSiluTimesUp) {
  std::mt19937 gen(5);
  for (int n : {1, 2, 7, 8, 9, 15, 16, 17, 100, 896, 4864, 8191, 8192}) {
    for (float scale : {0.01f, 1.0f, 8.0f, 60.0f}) {
      std::normal_distribution<float> value(0.0f, scale);
      std::vector<float> gate(n), up(n);
      for (float& g : gate) g = value(gen);
      for (float& u : up) u = value(gen) / scale;
      ExpectExact(gate, up);
    }
  }
}

TEST(swiglu_kernel, TheWholeRangeOfGates) {
  // From −100 to 100: past the −87.3 where exp(−|g|) leaves float's normal range, and
  // past +88.7, where exp(−g) of a negative g would overflow if it were computed.
  std::vector<float> gate, up;
  for (float g = -100.0f; g < 100.0f; g += 0.0173f) {
    gate.push_back(g);
    up.push_back(1.0f + 0.001f * g);
  }
  ExpectExact(gate, up);
  for (SwiGluKernel kernel : EveryKernel()) {
    const std::vector<float> got = Apply(kernel, {0.0f, -0.0f, 1e30f, -1e30f, kInf, -kInf, 3e38f}, std::vector<float>(7, 2.0f));
    EXPECT_EQ(got[0], 0.0f);
    EXPECT_EQ(got[1], 0.0f);
    EXPECT_EQ(got[2], 2e30f) << "silu(g) = g for a large g";
    EXPECT_EQ(got[3], 0.0f) << "silu(g) = 0 for a very negative g";
    EXPECT_EQ(got[4], kInf);
    EXPECT_TRUE(got[5] == 0.0f || std::isnan(got[5])) << got[5];
    EXPECT_EQ(got[6], kInf) << "3e38 · 2 overflows to ∞, as in the scalar product";
  }
}

TEST(swiglu_kernel, NaNStaysNaN) {
  for (SwiGluKernel kernel : EveryKernel()) {
    for (int at : {0, 3, 8, 10}) {
      std::vector<float> gate(11, 0.5f), up(11, 1.0f);
      gate[at] = std::numeric_limits<float>::quiet_NaN();
      const std::vector<float> got = Apply(kernel, gate, up);
      for (int i = 0; i < 11; ++i) EXPECT_EQ(std::isnan(got[i]), i == at) << i << " of a NaN at " << at;
    }
  }
}

}  // namespace
}  // namespace toyllm
