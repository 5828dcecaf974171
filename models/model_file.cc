#include "models/model_file.h"

#include <cstring>

#include "models/gguf_file.h"
#include "models/gguf_reader.h"
#include "models/llama2c_reader.h"

namespace toyllm {

absl::StatusOr<std::unique_ptr<ModelFile>> LoadModel(const std::string& path) {
  absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  uint32_t magic = 0;
  if ((*file)->size() >= sizeof(magic)) std::memcpy(&magic, (*file)->data(), sizeof(magic));
  if (magic == kGgufMagic) return ReadGguf(*std::move(file));
  // llama2.c's legacy format has no magic number, so it is what remains when none matches.
  return ReadLlama2c(*std::move(file));
}

}  // namespace toyllm
