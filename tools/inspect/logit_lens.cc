#include "tools/inspect/logit_lens.h"

#include "runtime/ops.h"

namespace toyllm {

std::vector<float> LensProbabilities(const ModelFile& model, const std::vector<float>& residual) {
  const ModelConfig& c = model.config;
  std::vector<float> h(residual);
  if (c.norm == NormKind::kRmsNorm) {
    RmsNorm(h.data(), residual.data(), model.weights.output_norm, c.dim, c.norm_eps);
  }
  std::vector<float> probs(c.vocab_size);
  Linear(h.data(), 1, model.weights.output, probs.data());
  Softmax(probs.data(), c.vocab_size);
  return probs;
}

}  // namespace toyllm
