// The standard model shapes `toyllm convert --random` writes with random weights, so that
// engines can be compared at known sizes without real checkpoints: llama2.c's TinyStories
// 15M and 110M, and TinyLlama's 1.1B with grouped-query attention.
#ifndef TOYLLM_MODELS_BENCHMARK_SHAPES_H_
#define TOYLLM_MODELS_BENCHMARK_SHAPES_H_

#include <string>

#include "absl/status/statusor.h"
#include "runtime/model_config.h"

namespace toyllm {

struct BenchmarkShape {
  const char* name;
  int dim;
  int hidden_dim;
  int n_layers;
  int n_heads;
  int n_kv_heads;
  int vocab_size;
  int context_length;
};

inline constexpr BenchmarkShape kBenchmarkShapes[] = {
    {"15M", 288, 768, 6, 6, 6, 32000, 256},
    {"110M", 768, 2048, 12, 12, 12, 32000, 1024},
    {"1.1B", 2048, 5632, 22, 32, 4, 32000, 2048},
};

// The config of the shape called `name` (e.g. "110M"); an error lists the names.
absl::StatusOr<ModelConfig> BenchmarkConfig(const std::string& name);

}  // namespace toyllm

#endif  // TOYLLM_MODELS_BENCHMARK_SHAPES_H_
