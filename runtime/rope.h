// Rotary position embedding: rotates each pair of a head's coordinates by an angle that
// grows with the position, so that q·k depends on how far apart two tokens are.
#ifndef TOYLLM_RUNTIME_ROPE_H_
#define TOYLLM_RUNTIME_ROPE_H_

#include <vector>

#include "runtime/model_config.h"

namespace toyllm {

class Rope {
 public:
  // Precomputes cos and sin of pos·θ_j for every position below n_positions and every
  // pair j of a head, θ_j = theta^(-2j / head_dim) / freq_factors[j] (no divisor when
  // freq_factors is empty; otherwise it has head_dim / 2 values).
  Rope(int head_dim, float theta, RopeLayout layout, int n_positions,
       const std::vector<float>& freq_factors = {});

  // Rotates n rows of n_heads heads each (row stride n_heads * head_dim); row t sits at
  // position pos + t.
  void Apply(float* x, int n, int n_heads, int pos) const;

 private:
  int head_dim_;
  RopeLayout layout_;
  std::vector<float> cos_;  // [n_positions, head_dim / 2]
  std::vector<float> sin_;
};

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_ROPE_H_
