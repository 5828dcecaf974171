// A model loaded from a file: the runtime's config and weight views over the mapped bytes.
// LoadModel recognises the format from the file's first bytes.
#ifndef TOYLLM_MODELS_MODEL_FILE_H_
#define TOYLLM_MODELS_MODEL_FILE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "models/mapped_file.h"
#include "runtime/model_config.h"
#include "runtime/weights.h"

namespace toyllm {

struct ModelFile {
  std::string format;  // e.g. "llama2.c legacy (float32)"
  ModelConfig config;
  ModelWeights weights;                // views into `mapping`
  std::unique_ptr<MappedFile> mapping;
};

// Opens a model file in any supported format. Every size is checked against the file's
// length before a weight view is made; errors name the file and the problem.
absl::StatusOr<std::unique_ptr<ModelFile>> LoadModel(const std::string& path);

}  // namespace toyllm

#endif  // TOYLLM_MODELS_MODEL_FILE_H_
