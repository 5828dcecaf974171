// GGUF (models/gguf_file.h, gguf_reader.h): the structure parser with every accessor over
// every key and tensor, then the whole LoadModel path a user's file takes (config,
// weights, the embedded tokenizer, a run).
#include "models/gguf_file.h"
#include "models/model_file.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/fuzz_util.h"

namespace toyllm::fuzz {
namespace {

// Parse promises that every accessor is safe on what it accepted, and that every tensor
// lies inside the file: its first and last bytes are read.
void ExerciseGguf(const GgufFile& gguf) {
  for (const std::string& key : gguf.Keys()) {
    gguf.Describe(key);
    (void)gguf.GetInt(key);
    (void)gguf.GetFloat(key);
    (void)gguf.GetString(key);
    (void)gguf.GetStringArray(key);
    (void)gguf.GetFloatArray(key);
    (void)gguf.GetIntArray(key);
    (void)gguf.GetByteArray(key);
  }
  volatile uint8_t sink = 0;
  for (const GgufTensor& t : gguf.tensors()) {
    if (t.bytes > 0) sink = sink + t.data[0] + t.data[t.bytes - 1];
  }
}

}  // namespace

void GgufInput(const uint8_t* data, size_t size) {
  const std::string path = WriteScratchFile("gguf/input.gguf", data, size);
  if (absl::StatusOr<std::unique_ptr<MappedFile>> mapped = MappedFile::Open(path); mapped.ok()) {
    if (absl::StatusOr<GgufFile> gguf = GgufFile::Parse(**mapped); gguf.ok()) ExerciseGguf(*gguf);
  }
  if (absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path); model.ok()) {
    ExerciseModel(**model);
  }
}

}  // namespace toyllm::fuzz
