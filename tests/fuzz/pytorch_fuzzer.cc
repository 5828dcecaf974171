// PyTorch checkpoints (models/pytorch_reader.h): the ZIP container (zip_archive.h), the
// restricted unpickler (pickle_reader.h) and the state dict's tensors, as LoadModel reads
// a .pt file.
#include "models/pytorch_reader.h"
#include "models/zip_archive.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/fuzz_util.h"

namespace toyllm::fuzz {

void PytorchInput(const uint8_t* data, size_t size) {
  const std::string path = WriteScratchFile("pytorch/input.pt", data, size);
  // The archive alone: every entry it accepts must lie inside the file.
  if (absl::StatusOr<std::unique_ptr<MappedFile>> mapped = MappedFile::Open(path); mapped.ok()) {
    if (absl::StatusOr<ZipArchive> zip = ZipArchive::Parse(**mapped); zip.ok()) {
      volatile uint8_t sink = 0;
      for (const auto& [name, entry] : zip->entries()) {
        if (entry.size > 0) sink = sink + entry.data[0] + entry.data[entry.size - 1];
      }
    }
  }
  if (absl::StatusOr<std::unique_ptr<ModelFile>> model = ReadPytorchCheckpoint(path); model.ok()) {
    ExerciseModel(**model);
  }
}

}  // namespace toyllm::fuzz
