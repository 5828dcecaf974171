#include "tools/inspect/npy_writer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/atomic_file.h"

namespace toyllm {

std::string NpyBytes(const float* data, const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  // A one-element tuple needs its trailing comma: (5,).
  const std::string dims = absl::StrCat(absl::StrJoin(shape, ", "), shape.size() == 1 ? "," : "");
  std::string header =
      absl::StrCat("{'descr': '<f4', 'fortran_order': False, 'shape': (", dims, "), }");
  // Magic (6) + version (2) + length (2) + header + '\n' is padded to a multiple of 64.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  const uint16_t length = static_cast<uint16_t>(header.size());
  std::string bytes = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<char>(length & 0xff),
                       static_cast<char>(length >> 8)};
  bytes += header;
  // An array with a zero dimension has no data, and `data` may then be null.
  if (count > 0) bytes.append(reinterpret_cast<const char*>(data), count * sizeof(float));
  return bytes;
}

absl::Status WriteNpy(const std::string& path, const float* data,
                      const std::vector<int64_t>& shape) {
  const std::string bytes = NpyBytes(data, shape);
  return WriteFileAtomically(path, [&](std::FILE* file) {
    if (std::fwrite(bytes.data(), 1, bytes.size(), file) != bytes.size()) {
      return absl::DataLossError(absl::StrCat(path, ": write failed"));
    }
    return absl::OkStatus();
  });
}

}  // namespace toyllm
