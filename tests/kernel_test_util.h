// Helpers the kernel suites share: the instruction sets to test, random inputs, and weight
// matrices stored as any type beside the floats that type decodes to.
#ifndef TOYLLM_TESTS_KERNEL_TEST_UTIL_H_
#define TOYLLM_TESTS_KERNEL_TEST_UTIL_H_

#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include "runtime/cpu_features.h"
#include "runtime/weights.h"

namespace toyllm::testing {

// The vector instruction sets (AVX2, AVX-512) this CPU has, each to compare with the
// scalar reference. On a CPU with neither, says loudly that only the scalar kernel runs.
std::vector<CpuLevel> VectorLevels();

// n standard-normal floats.
std::vector<float> RandomVector(std::mt19937& gen, size_t n);

// A weight matrix stored as `type`, 4 bytes off the vector width and the cache line:
// GGUF promises only 32-byte tensor starts (and element alignment), so the kernels must
// not need more. Element alignment itself holds, as UBSan requires.
struct TypedMatrix {
  std::string bytes;
  std::vector<float> floats;  // the stored values as the type decodes them
  Matrix view;
};
TypedMatrix MakeMatrix(std::mt19937& gen, WeightType type, int rows, int cols);

}  // namespace toyllm::testing

#endif  // TOYLLM_TESTS_KERNEL_TEST_UTIL_H_
