#include "models/random_llama.h"

#include <cmath>
#include <vector>

#include "absl/strings/match.h"

namespace toyllm {
namespace {

constexpr float kWeightStddev = 0.02f;

// SplitMix64: a small, fast generator whose output is the same on every platform (the
// standard library's distributions are not), so a seed names one file.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1]: never 0, so that its logarithm is finite.
  double Uniform() { return ((Next() >> 11) + 1) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

// FNV-1a: a tensor's own stream, whatever order the writer asks for tensors in.
uint64_t HashName(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// n values from N(0, stddev²) by the Box–Muller transform, two per pair of uniforms.
void FillNormal(uint64_t seed, float stddev, std::vector<float>& out) {
  SplitMix64 rng(seed);
  for (size_t i = 0; i < out.size(); i += 2) {
    const double radius = stddev * std::sqrt(-2.0 * std::log(rng.Uniform()));
    const double angle = 2.0 * M_PI * rng.Uniform();
    out[i] = static_cast<float>(radius * std::cos(angle));
    if (i + 1 < out.size()) out[i + 1] = static_cast<float>(radius * std::sin(angle));
  }
}

// A ModelWeights with every matrix's shape and no data: the writer takes the values from
// ExportOptions::values.
ModelWeights Shapes(const ModelConfig& c) {
  ModelWeights w;
  w.token_embedding = {nullptr, c.vocab_size, c.dim};
  w.output = {nullptr, c.vocab_size, c.dim};
  w.layers.resize(c.n_layers);
  for (LayerWeights& l : w.layers) {
    l.wq = {nullptr, c.q_dim(), c.dim};
    l.wk = {nullptr, c.kv_dim(), c.dim};
    l.wv = {nullptr, c.kv_dim(), c.dim};
    l.wo = {nullptr, c.dim, c.q_dim()};
    l.w1 = {nullptr, c.hidden_dim, c.dim};
    l.w2 = {nullptr, c.dim, c.hidden_dim};
    l.w3 = {nullptr, c.hidden_dim, c.dim};
  }
  return w;
}

}  // namespace

absl::Status WriteRandomLlamaGguf(const std::string& path, const ModelConfig& config,
                                  uint64_t seed, ExportOptions options) {
  if (absl::Status s = ValidateConfig(config); !s.ok()) return s;
  std::vector<float> buffer;  // one tensor at a time
  options.values = [seed, &buffer](const std::string& name, int64_t n) {
    buffer.assign(n, 1.0f);
    if (!absl::EndsWith(name, "norm.weight")) FillNormal(seed ^ HashName(name), kWeightStddev, buffer);
    return buffer.data();
  };
  return WriteLlamaGguf(path, config, Shapes(config), options);
}

}  // namespace toyllm
