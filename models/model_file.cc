#include "models/model_file.h"

#include <sys/stat.h>

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include "models/gguf_file.h"
#include "models/gguf_reader.h"
#include "models/hf_reader.h"
#include "models/llama2c_reader.h"
#include "models/pytorch_reader.h"
#include "models/zip_archive.h"
#include "runtime/physical_memory.h"

namespace toyllm {

absl::Status CheckConversionFits(int64_t bytes, const std::string& path) {
  const int64_t memory = PhysicalMemoryBytes();
  if (bytes <= memory) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      path, ": the weights need ", bytes >> 20, " MiB as float32, more than this machine's ",
      memory >> 20, " MiB of memory"));
}

absl::StatusOr<std::unique_ptr<ModelFile>> LoadModel(const std::string& path, FileMemory memory) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    if (stat((path + "/config.json").c_str(), &st) == 0) return ReadHfDirectory(path);
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file (a directory without config.json, so not a Hugging Face model)"));
  }
  absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(path, memory);
  if (!file.ok()) return file.status();
  uint32_t magic = 0;
  if ((*file)->size() >= sizeof(magic)) std::memcpy(&magic, (*file)->data(), sizeof(magic));
  if (magic == kGgufMagic) return ReadGguf(*std::move(file));
  if (magic == kZipMagic) return ReadPytorchCheckpoint(path);  // torch.save's ZIP format
  // A file named .gguf without the magic is a damaged GGUF, not a llama2.c checkpoint.
  if (absl::EndsWith(path, ".gguf")) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": bad GGUF: the file does not start with 'GGUF'"));
  }
  // llama2.c's legacy format has no magic number, so it is what remains when none matches.
  return ReadLlama2c(*std::move(file));
}

}  // namespace toyllm
