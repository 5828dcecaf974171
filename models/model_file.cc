#include "models/model_file.h"

#include "models/llama2c_reader.h"

namespace toyllm {

absl::StatusOr<std::unique_ptr<ModelFile>> LoadModel(const std::string& path) {
  absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  // llama2.c's legacy format has no magic number, so it is what remains when none matches.
  return ReadLlama2c(*std::move(file));
}

}  // namespace toyllm
