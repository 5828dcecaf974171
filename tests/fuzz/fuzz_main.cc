// libFuzzer's entry point for one harness of fuzz_targets.h, chosen at compile time by
// TOYLLM_FUZZ_TARGET (see tests/fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  toyllm::fuzz::TOYLLM_FUZZ_TARGET(data, size);
  return 0;
}
