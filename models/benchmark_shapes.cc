#include "models/benchmark_shapes.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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
    return c;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", name, "' is not a model shape (", absl::StrJoin(names, ", "), ")"));
}

}  // namespace toyllm
