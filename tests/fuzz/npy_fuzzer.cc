// The .npy writer (tools/inspect/npy_writer.h) on shapes from the input: the first byte is the
// rank (0..32, NumPy's limit), the next bytes the dimensions. The file must come out as
// NumPy reads it: version 1.0, the header padded to a multiple of 64, then the floats.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/fuzz_util.h"
#include "tools/inspect/npy_writer.h"

namespace toyllm::fuzz {

void NpyInput(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const size_t rank = data[0] % 33;
  if (size < 1 + rank) return;
  std::vector<int64_t> shape;
  int64_t count = 1;
  for (size_t i = 0; i < rank; ++i) {
    shape.push_back(data[1 + i]);
    count *= data[1 + i];
    if (count > (1 << 16)) return;  // large arrays test nothing small ones do not
  }
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) values[i] = static_cast<float>(data[(1 + rank + i) % size]);
  const std::string path = ScratchDir() + "/out.npy";
  if (absl::Status s = WriteNpy(path, values.data(), shape); !s.ok()) {
    std::fprintf(stderr, "WriteNpy failed: %s\n", std::string(s.message()).c_str());
    std::abort();
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  uint8_t preamble[10] = {};
  const bool read = f != nullptr && std::fread(preamble, 1, sizeof(preamble), f) == sizeof(preamble);
  const long header = preamble[8] | preamble[9] << 8;
  const bool sized = read && std::fseek(f, 0, SEEK_END) == 0 &&
                     std::ftell(f) == 10 + header + count * static_cast<long>(sizeof(float));
  if (f != nullptr) std::fclose(f);
  if (!sized || (10 + header) % 64 != 0 || preamble[6] != 1 || preamble[7] != 0) {
    std::fprintf(stderr, "the .npy file of rank %zu is malformed\n", rank);
    std::abort();
  }
}

}  // namespace toyllm::fuzz
