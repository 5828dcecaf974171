// A Hugging Face directory (models/hf_reader.h): the input is config.json and, after a NUL
// byte (which JSON text never holds), model.safetensors.index.json. Beside them lie the
// tiny model's valid model.safetensors and tokenizer.model, so that a config that fits
// them loads and runs, and an index can point at any of the files.
#include <cstring>

#include "models/model_file.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/tiny_model.h"

namespace toyllm::fuzz {
namespace {

// The directory, with the fixed files written on first use.
const std::string& Directory() {
  static const std::string* dir = [] {
    const std::string weights = HfSafetensors(MakeTinyModel(/*tied=*/false));
    for (auto [name, bytes] : {std::pair{"hf/model.safetensors", weights},
                               std::pair{"hf/tokenizer.model", TinyVocabulary()}}) {
      WriteScratchFile(name, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
    return new std::string(ScratchDir() + "/hf");
  }();
  return *dir;
}

}  // namespace

void HfConfigInput(const uint8_t* data, size_t size) {
  const std::string& dir = Directory();
  const auto* nul = static_cast<const uint8_t*>(size > 0 ? std::memchr(data, 0, size) : nullptr);
  const size_t config_bytes = nul == nullptr ? size : nul - data;
  WriteScratchFile("hf/config.json", data, config_bytes);
  if (nul != nullptr) {
    WriteScratchFile("hf/model.safetensors.index.json", nul + 1, size - config_bytes - 1);
  } else {
    RemoveScratchFile("hf/model.safetensors.index.json");
  }
  if (absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(dir); model.ok()) {
    ExerciseModel(**model);
  }
}

}  // namespace toyllm::fuzz
