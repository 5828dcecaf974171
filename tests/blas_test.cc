// The BLAS the prefill runs on: on a CPU with AVX2 or AVX-512 it must not be a generic
// fallback nor kernels below the CPU's level (AVX2 ones on AVX-512), and when OpenBLAS falls back by itself (simulated with OPENBLAS_CORETYPE, as
// OpenBLAS 0.3.21 does on its own on processors newer than it, e.g. Emerald Rapids) toyllm
// replaces the kernels with ones the CPU runs, and the numbers stay the same.
#include "runtime/blas.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cpu_features.h"
#include "tests/test_env.h"
#include "tests/test_util.h"

namespace toyllm {
namespace {

using ::toyllm::testing::RunResult;
using ::toyllm::testing::RunToyllm;

const std::string kModel = std::string(TOYLLM_SOURCE_DIR) + "/models/coref.gguf";

bool CpuHasAvx2() { return DetectedCpuLevel() != CpuLevel::kScalar; }

// The kernels the CPU can run: what toyllm switches a fallback to.
std::string ExpectedCore() { return DetectedCpuLevel() == CpuLevel::kAvx512 ? "SkylakeX" : "Haswell"; }

// Runs toyllm with one environment variable set (and the others as they are).
RunResult RunWith(const std::vector<std::pair<const char*, const char*>>& env,
                  const std::vector<std::string>& args) {
  for (const auto& [name, value] : env) setenv(name, value, 1);
  RunResult r = RunToyllm(args);
  for (const auto& [name, value] : env) unsetenv(name);
  return r;
}

std::string InfoLine(const std::string& out, const std::string& key) {
  const size_t at = out.find("\n" + key + ":");
  if (at == std::string::npos) return "";
  const size_t begin = out.find_first_not_of(' ', at + key.size() + 2);
  return out.substr(begin, out.find('\n', begin) - begin);
}

TEST(blas, FallbackCoresAreTheOnesBelowTheCpu) {
  for (const char* core : {"Prescott", "Core2", "Nehalem", "Sandybridge", "Atom", "Unknown"}) {
    EXPECT_TRUE(IsFallbackCore(core, CpuLevel::kAvx2)) << core;
    EXPECT_TRUE(IsFallbackCore(core, CpuLevel::kAvx512)) << core;
    EXPECT_FALSE(IsFallbackCore(core, CpuLevel::kScalar)) << core << ": all this CPU runs";
  }
  for (const char* core : {"Haswell", "Zen", "excavator"}) {
    EXPECT_FALSE(IsFallbackCore(core, CpuLevel::kAvx2)) << core;
    EXPECT_TRUE(IsFallbackCore(core, CpuLevel::kAvx512)) << core << ": AVX2 kernels on an AVX-512 CPU";
  }
  for (const char* core : {"SkylakeX", "COOPERLAKE", "sapphirerapids"}) {
    EXPECT_FALSE(IsFallbackCore(core, CpuLevel::kAvx2)) << core;
    EXPECT_FALSE(IsFallbackCore(core, CpuLevel::kAvx512)) << core;
  }
}

TEST(blas, TheGemmInUseIsNotAFallbackOnThisCpu) {
  const BlasInfo& blas = Blas();
  EXPECT_EQ(blas.config.rfind("OpenBLAS ", 0), 0u) << blas.config;
  EXPECT_FALSE(blas.core.empty());
  EXPECT_FALSE(blas.fallback) << blas.core << " on a CPU with " << CpuLevelName(DetectedCpuLevel());
  EXPECT_FALSE(IsFallbackCore(blas.core, DetectedCpuLevel())) << blas.core;
}

TEST(blas, InfoReportsTheBlasAndTheKernels) {
  const RunResult r = RunToyllm({"info", "-m", kModel});
  ASSERT_TRUE(testing::Succeeds(r));
  EXPECT_EQ(InfoLine(r.out, "blas"), Blas().config);
  EXPECT_EQ(InfoLine(r.out, "blas_kernels").rfind(Blas().core, 0), 0u) << r.out;
  EXPECT_EQ(InfoLine(r.out, "toyllm_kernels"), KernelsInUse());
  if (PrefillUsesBf16()) {  // and the way back to exact float32 products
    EXPECT_EQ(InfoLine(r.out, "toyllm_kernels"), "avx512, bf16 prefill");
    const RunResult exact = RunWith({{"TOYLLM_CPU", "avx512"}}, {"info", "-m", kModel});
    ASSERT_TRUE(testing::Succeeds(exact));
    EXPECT_EQ(InfoLine(exact.out, "toyllm_kernels"), "avx512");
    const RunResult empty = RunWith({{"TOYLLM_CPU", ""}}, {"info", "-m", kModel});
    ASSERT_TRUE(testing::Succeeds(empty));
    EXPECT_EQ(InfoLine(empty.out, "toyllm_kernels"), "avx512, bf16 prefill") << "an empty cap is no cap";
  }
}

TEST(blas, ASimulatedFallbackIsDetectedAndReplaced) {
  if (!CpuHasAvx2()) GTEST_SKIP() << "this CPU has no AVX2: Prescott is no fallback here";
  const RunResult kept = RunWith({{"OPENBLAS_CORETYPE", "Prescott"}, {"TOYLLM_KEEP_BLAS_CORE", "1"}},
                                 {"info", "-m", kModel});
  ASSERT_TRUE(testing::Succeeds(kept));
  EXPECT_EQ(InfoLine(kept.out, "blas_kernels"), "Prescott (a generic fallback on this CPU: prefill runs slow)");

  const RunResult fixed = RunWith({{"OPENBLAS_CORETYPE", "Prescott"}}, {"info", "-m", kModel});
  ASSERT_TRUE(testing::Succeeds(fixed));
  EXPECT_EQ(InfoLine(fixed.out, "blas_kernels"), ExpectedCore() + " (OpenBLAS chose Prescott, a fallback)");
  EXPECT_NE(InfoLine(fixed.out, "blas").find(ExpectedCore()), std::string::npos) << fixed.out;
}

TEST(blas, TheReplacedKernelsComputeTheSameText) {
  if (!CpuHasAvx2()) GTEST_SKIP() << "this CPU has no AVX2";
  const std::string model = testing::Stories260K();
  TOYLLM_REQUIRE_FILE(model);
  // The prompt goes through sgemm (prefill); greedy decoding makes any wrong product visible.
  const std::vector<std::string> args = {"generate", "-m", model, "-p", "Once upon a time, there was a",
                                         "-n", "24", "--temp", "0"};
  const RunResult own = RunToyllm(args);
  const RunResult replaced = RunWith({{"OPENBLAS_CORETYPE", "Prescott"}}, args);
  ASSERT_TRUE(testing::Succeeds(own));
  ASSERT_TRUE(testing::Succeeds(replaced));
  EXPECT_GT(own.out.size(), 40u);
  EXPECT_EQ(replaced.out, own.out);
}

}  // namespace
}  // namespace toyllm
