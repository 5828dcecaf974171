// safetensors (huggingface/safetensors): an 8-byte little-endian header length, a JSON
// header {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}},
// then the byte buffer. Parse checks every entry against the buffer before use.
#ifndef TOYLLM_MODELS_SAFETENSORS_FILE_H_
#define TOYLLM_MODELS_SAFETENSORS_FILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/mapped_file.h"

namespace toyllm {

struct SafetensorsTensor {
  std::string dtype;           // "F32", "F16", "BF16", ...
  std::vector<int64_t> shape;  // PyTorch order: outermost first
  const uint8_t* data = nullptr;
  uint64_t bytes = 0;
};

class SafetensorsFile {
 public:
  // `file` must outlive the result.
  static absl::StatusOr<SafetensorsFile> Parse(const MappedFile& file);

  const std::map<std::string, SafetensorsTensor>& tensors() const { return tensors_; }

 private:
  std::map<std::string, SafetensorsTensor> tensors_;
};

}  // namespace toyllm

#endif  // TOYLLM_MODELS_SAFETENSORS_FILE_H_
