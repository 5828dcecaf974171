// Views of a model's weights. The runtime never owns weight memory: a reader in models/
// maps a file and hands out these views, so float32 weights are used in place.
#ifndef TOYLLM_RUNTIME_WEIGHTS_H_
#define TOYLLM_RUNTIME_WEIGHTS_H_

#include <vector>

namespace toyllm {

// A row-major matrix [rows, cols]. A linear layer W maps x (cols) to y = W·x (rows), the
// PyTorch nn.Linear convention, so a projection's output width is its number of rows.
struct Matrix {
  const float* data = nullptr;
  int rows = 0;
  int cols = 0;

  const float* row(int r) const { return data + static_cast<long>(r) * cols; }
};

struct LayerWeights {
  const float* attn_norm = nullptr;  // [dim]
  Matrix wq;                         // [n_heads * head_dim, dim]
  Matrix wk;                         // [n_kv_heads * head_dim, dim]
  Matrix wv;                         // [n_kv_heads * head_dim, dim]
  Matrix wo;                         // [dim, n_heads * head_dim]
  const float* ffn_norm = nullptr;   // [dim]
  Matrix w1;                         // gate [hidden, dim]
  Matrix w2;                         // down [dim, hidden]
  Matrix w3;                         // up [hidden, dim]
};

struct ModelWeights {
  Matrix token_embedding;  // [vocab, dim]
  std::vector<LayerWeights> layers;
  const float* output_norm = nullptr;  // [dim]
  Matrix output;                       // [vocab, dim]; the embedding itself when tied
};

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_WEIGHTS_H_
