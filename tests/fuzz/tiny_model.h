// A tiny random Llama model and its encodings in each format toyllm reads, made by the
// project's own code: the seeds of the fuzzers (make_seeds) and the fixed files beside a
// fuzzed input (hf_config_fuzzer). Third-party models are never copied into the corpus.
#ifndef TOYLLM_TESTS_FUZZ_TINY_MODEL_H_
#define TOYLLM_TESTS_FUZZ_TINY_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/model_config.h"
#include "runtime/weights.h"

namespace toyllm::fuzz {

struct TinyModel {
  ModelConfig config;
  std::vector<std::vector<float>> storage;  // what `weights` views
  ModelWeights weights;
};

// dim 8 (2 heads of 4, one key/value head), hidden 16, one layer, 16 tokens, context 8;
// `dim` and `hidden` may be raised (to 32 for whole q8_0 blocks). Weights are uniform in
// [-0.5, 0.5) from a fixed seed, so the same call gives the same bytes.
TinyModel MakeTinyModel(bool tied, int dim = 8, int hidden = 16);

// A SentencePiece BPE model with the 16 pieces of the tiny model's vocabulary.
std::string TinyVocabulary();

// llama2.c checkpoints: version 0 is the legacy format, 1 float32, 2 int8 groups.
std::string Llama2cFile(const TinyModel& model, int version, int group_size = 4);

// A safetensors file of named float32 tensors stored as `dtype` (F32, F16 or BF16).
struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;
  const float* data;
};
std::string SafetensorsFile(const std::vector<NamedTensor>& tensors, const std::string& dtype);

// The model as a Hugging Face LlamaForCausalLM directory's model.safetensors and config.json.
std::string HfSafetensors(const TinyModel& model, const std::string& dtype = "F32");
std::string HfConfigJson(const ModelConfig& config);

}  // namespace toyllm::fuzz

#endif  // TOYLLM_TESTS_FUZZ_TINY_MODEL_H_
