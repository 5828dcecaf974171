// A model loaded from a file: the runtime's config and weight views over the mapped bytes.
// LoadModel recognises the format from the file's first bytes.
#ifndef TOYLLM_MODELS_MODEL_FILE_H_
#define TOYLLM_MODELS_MODEL_FILE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "models/mapped_file.h"
#include "runtime/model_config.h"
#include "runtime/weights.h"
#include "tokenizer/vocabulary.h"

namespace toyllm {

struct ModelFile {
  std::string format;  // e.g. "llama2.c legacy (float32)"
  ModelConfig config;
  ModelWeights weights;  // views into `mappings`, or into `converted` where converted
  std::vector<std::unique_ptr<MappedFile>> mappings;  // the file, or a checkpoint's shards
  // float32 copies of what the runtime cannot use in place: other readers' f16/bf16/int8
  // tensors, GGUF's misaligned float32 tensors and non-float32 norms
  std::vector<std::vector<float>> converted;

  // The tokenizer the file carries (GGUF) or that lies beside it (a checkpoint's
  // tokenizer.model or tokenizer.json); empty() when there is none.
  Vocabulary vocabulary;
  // The Jinja2 chat template the file carries (GGUF tokenizer.chat_template), or empty.
  std::string chat_template;

  // What `toyllm info` lists for formats that describe themselves (GGUF).
  std::vector<std::pair<std::string, std::string>> metadata;  // key, rendered value
  struct Tensor {
    std::string name;
    std::string type;
    std::vector<int64_t> dims;  // ggml order, contiguous axis first
  };
  std::vector<Tensor> tensors;
};

// Fails, naming `path` and both sizes, when float32 copies of `bytes` (weights stored as
// f16, bf16, q8_0 or int8, which take two to four times their size as float32) would not
// fit in this machine's physical memory. Readers call it with the total before making the
// first copy, so that a model too large is refused instead of being killed part-way.
absl::Status CheckConversionFits(int64_t bytes, const std::string& path);

// Opens a model in any supported format: a GGUF or llama2.c file, or a Hugging Face
// directory. Every size is checked against the file's
// length before a weight view is made; errors name the file and the problem. `memory`
// applies to GGUF and llama2.c files (mapped or read, locked or not); the other formats'
// readers map theirs.
absl::StatusOr<std::unique_ptr<ModelFile>> LoadModel(const std::string& path, FileMemory memory = {});

}  // namespace toyllm

#endif  // TOYLLM_MODELS_MODEL_FILE_H_
