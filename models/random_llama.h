// Llama models with random weights, written as GGUF for benchmarks: the speed of a forward
// pass depends on the shapes and the stored type, not on what the weights learned.
#ifndef TOYLLM_MODELS_RANDOM_LLAMA_H_
#define TOYLLM_MODELS_RANDOM_LLAMA_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "models/llama_gguf_export.h"
#include "runtime/model_config.h"

namespace toyllm {

// Writes a model of `config` whose matrices and biases are drawn from N(0, 0.02²) (small, so
// that activations stay finite through every layer) and whose norms are 1, with llama.cpp's
// keys and no tokenizer. Each tensor's values come from `seed` and its name alone, so the
// same seed gives the same bytes; tensors are generated one at a time as the file is
// written. `options.values` is set here.
absl::Status WriteRandomLlamaGguf(const std::string& path, const ModelConfig& config,
                                  uint64_t seed, ExportOptions options);

}  // namespace toyllm

#endif  // TOYLLM_MODELS_RANDOM_LLAMA_H_
