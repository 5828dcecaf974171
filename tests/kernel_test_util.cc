#include "tests/kernel_test_util.h"

#include <cstdint>
#include <iostream>

#include "runtime/weight_convert.h"

namespace toyllm::testing {

std::vector<CpuLevel> VectorLevels() {
  std::vector<CpuLevel> levels;
  for (CpuLevel level : {CpuLevel::kAvx2, CpuLevel::kAvx512}) {
    if (level <= DetectedCpuLevel()) levels.push_back(level);
  }
  if (levels.empty()) std::cerr << "*** this CPU has no AVX2: no vector kernel is tested ***\n";
  return levels;
}

std::vector<float> RandomVector(std::mt19937& gen, size_t n) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(gen);
  return v;
}

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

}  // namespace toyllm::testing
