// llama2.c checkpoints (models/llama2c_reader.h): the legacy format, and versions 1 and 2
// behind the "ak42" magic.
#include "models/llama2c_reader.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/fuzz_util.h"

namespace toyllm::fuzz {

void Llama2cInput(const uint8_t* data, size_t size) {
  const std::string path = WriteScratchFile("llama2c/input.bin", data, size);
  absl::StatusOr<std::unique_ptr<MappedFile>> mapped = MappedFile::Open(path);
  if (!mapped.ok()) return;
  // Directly rather than through LoadModel, which would send a GGUF or ZIP magic elsewhere.
  if (absl::StatusOr<std::unique_ptr<ModelFile>> model = ReadLlama2c(*std::move(mapped)); model.ok()) {
    ExerciseModel(**model);
  }
}

}  // namespace toyllm::fuzz
