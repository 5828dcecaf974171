// llama2.c checkpoints (karpathy/llama2.c export.py): the legacy format (a bare header of
// seven int32) and the versioned export (magic "ak42", version 1 = float32).
#ifndef TOYLLM_MODELS_LLAMA2C_READER_H_
#define TOYLLM_MODELS_LLAMA2C_READER_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "models/model_file.h"

namespace toyllm {

inline constexpr uint32_t kLlama2cMagic = 0x616b3432;  // "ak42" read as little-endian uint32

// Reads a llama2.c checkpoint; the versioned export when the file starts with the magic,
// the legacy format otherwise.
absl::StatusOr<std::unique_ptr<ModelFile>> ReadLlama2c(std::unique_ptr<MappedFile> file);

}  // namespace toyllm

#endif  // TOYLLM_MODELS_LLAMA2C_READER_H_
