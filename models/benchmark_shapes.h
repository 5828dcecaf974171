// The standard model shapes `toyllm convert --random` writes with random weights, so that
// engines can be compared at known sizes without real checkpoints: llama2.c's TinyStories
// 15M and 110M, TinyLlama's 1.1B with grouped-query attention, and the two small models
// people download most, Llama 3.2 1B and Qwen 2.5 0.5B, with their architectures' options.
#ifndef TOYLLM_MODELS_BENCHMARK_SHAPES_H_
#define TOYLLM_MODELS_BENCHMARK_SHAPES_H_

#include <string>

#include "absl/status/statusor.h"
#include "runtime/model_config.h"

namespace toyllm {

// What a shape's blocks add to Llama 2's.
enum class ShapeFamily {
  kLlama2,
  kLlama3,  // rope_freqs of Llama 3.2's rope_scaling (factor 32), θ 500000, tied
  kQwen2,   // q/k/v biases, half-split RoPE, θ 1e6, eps 1e-6, tied
};

struct BenchmarkShape {
  const char* name;
  int dim;
  int hidden_dim;
  int n_layers;
  int n_heads;
  int n_kv_heads;
  int vocab_size;
  int context_length;  // the real models' 131072 and 32768 are shortened to keep the KV cache small
  ShapeFamily family;
};

inline constexpr BenchmarkShape kBenchmarkShapes[] = {
    {"15M", 288, 768, 6, 6, 6, 32000, 256, ShapeFamily::kLlama2},
    {"110M", 768, 2048, 12, 12, 12, 32000, 1024, ShapeFamily::kLlama2},
    {"1.1B", 2048, 5632, 22, 32, 4, 32000, 2048, ShapeFamily::kLlama2},
    {"llama3.2-1b", 2048, 8192, 16, 32, 8, 128256, 4096, ShapeFamily::kLlama3},
    {"qwen2.5-0.5b", 896, 4864, 24, 14, 2, 151936, 4096, ShapeFamily::kQwen2},
};

// The config of the shape called `name` (e.g. "110M"); an error lists the names.
absl::StatusOr<ModelConfig> BenchmarkConfig(const std::string& name);

}  // namespace toyllm

#endif  // TOYLLM_MODELS_BENCHMARK_SHAPES_H_
