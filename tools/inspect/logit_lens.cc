#include "tools/inspect/logit_lens.h"

#include <algorithm>
#include <numeric>

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

std::set<std::pair<Tap, int>> LensTaps(int n_layers) {
  std::set<std::pair<Tap, int>> taps = {{Tap::kEmbed, -1}};
  for (int l = 0; l < n_layers; ++l) taps.insert({Tap::kResidPost, l});
  return taps;
}

std::vector<std::vector<LensGuess>> LensAt(const ModelFile& model, const TapRecorder& recorder, int position,
                                           int top) {
  std::vector<std::vector<LensGuess>> stages;
  for (int stage = -1; stage < model.config.n_layers; ++stage) {
    const auto& rows = *recorder.Rows(stage < 0 ? Tap::kEmbed : Tap::kResidPost, stage);
    const std::vector<float> probs = LensProbabilities(model, rows[position]);
    std::vector<int> order(probs.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + top, order.end(),
                      [&probs](int a, int b) { return probs[a] > probs[b]; });
    std::vector<LensGuess> best;
    for (int i = 0; i < top; ++i) best.push_back({order[i], probs[order[i]]});
    stages.push_back(std::move(best));
  }
  return stages;
}

}  // namespace toyllm
