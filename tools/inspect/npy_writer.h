// NumPy .npy files (format version 1.0) of float32 arrays, for inspection in Python.
#ifndef TOYLLM_TOOLS_INSPECT_NPY_WRITER_H_
#define TOYLLM_TOOLS_INSPECT_NPY_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace toyllm {

// The bytes of a .npy file holding a C-order float32 array of the given shape (`data`
// holds the product of `shape` values): what WriteNpy writes, for answers sent from memory.
std::string NpyBytes(const float* data, const std::vector<int64_t>& shape);

// Writes a C-order float32 array of the given shape, atomically. `data` holds the product
// of `shape` values.
absl::Status WriteNpy(const std::string& path, const float* data,
                      const std::vector<int64_t>& shape);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_INSPECT_NPY_WRITER_H_
