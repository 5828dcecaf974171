// A safetensors file's header and buffer (models/safetensors_file.h): every tensor Parse
// accepts must lie inside the file, which reading all its bytes checks under ASan.
#include "models/safetensors_file.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/fuzz_util.h"

namespace toyllm::fuzz {

void SafetensorsInput(const uint8_t* data, size_t size) {
  const std::string path = WriteScratchFile("safetensors/input.safetensors", data, size);
  absl::StatusOr<std::unique_ptr<MappedFile>> mapped = MappedFile::Open(path);
  if (!mapped.ok()) return;
  absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Parse(**mapped);
  if (!file.ok()) return;
  volatile uint8_t sink = 0;
  for (const auto& [name, t] : file->tensors()) {
    for (uint64_t i = 0; i < t.bytes; ++i) sink = sink + t.data[i];
  }
}

}  // namespace toyllm::fuzz
