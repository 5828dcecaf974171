#include "models/benchmark_shapes.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/llama3_rope.h"

namespace toyllm {

absl::StatusOr<ModelConfig> BenchmarkConfig(const std::string& name) {
  std::vector<std::string> names;
  for (const BenchmarkShape& s : kBenchmarkShapes) {
    names.push_back(s.name);
    if (name != s.name) continue;
    ModelConfig c;
    c.dim = s.dim;
    c.hidden_dim = s.hidden_dim;
    c.n_layers = s.n_layers;
    c.n_heads = s.n_heads;
    c.n_kv_heads = s.n_kv_heads;
    c.head_dim = s.dim / s.n_heads;
    c.vocab_size = s.vocab_size;
    c.context_length = s.context_length;
    switch (s.family) {
      case ShapeFamily::kLlama2:
        break;
      case ShapeFamily::kLlama3:  // Llama-3.2-1B's config.json
        c.rope_theta = 500000.0f;
        c.tied_output = true;
        c.rope_freq_factors = Llama3RopeFactors(c.rope_theta, c.head_dim, Llama3RopeScaling{32.0f, 1.0f, 4.0f, 8192});
        break;
      case ShapeFamily::kQwen2:  // Qwen2.5-0.5B's config.json
        c.rope_theta = 1000000.0f;
        c.norm_eps = 1e-6f;
        c.tied_output = true;
        c.qkv_bias = true;
        c.rope_layout = RopeLayout::kHalfSplit;
        break;
    }
    return c;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", name, "' is not a model shape (", absl::StrJoin(names, ", "), ")"));
}

}  // namespace toyllm
