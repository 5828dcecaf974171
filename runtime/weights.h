// Views of a model's weights. The runtime never owns weight memory: a reader in models/
// maps a file and hands out these views, so weights (float32, f16, bf16 or a block type) are used
// in place, as the file stores them.
#ifndef TOYLLM_RUNTIME_WEIGHTS_H_
#define TOYLLM_RUNTIME_WEIGHTS_H_

#include <cstdint>
#include <vector>

#include "runtime/weight_type.h"

namespace toyllm {

// A row-major matrix [rows, cols]. A linear layer W maps x (cols) to y = W·x (rows), the
// PyTorch nn.Linear convention, so a projection's output width is its number of rows.
// Rows are stored one after another, each in `type` (for a block type, whole blocks).
struct Matrix {
  const void* data = nullptr;
  int rows = 0;
  int cols = 0;
  WeightType type = WeightType::kF32;

  int64_t row_bytes() const { return WeightBytes(type, cols); }
  const void* row(int r) const { return static_cast<const char*>(data) + r * row_bytes(); }
  // The elements of a float32 matrix; only meaningful when type is kF32.
  const float* floats() const { return static_cast<const float*>(data); }
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
  // Only when the config asks for them (qkv_bias, qk_norm):
  const float* bq = nullptr;         // [n_heads * head_dim]
  const float* bk = nullptr;         // [n_kv_heads * head_dim]
  const float* bv = nullptr;         // [n_kv_heads * head_dim]
  const float* q_norm = nullptr;     // [head_dim], shared by every query head
  const float* k_norm = nullptr;     // [head_dim], shared by every key head
};

struct ModelWeights {
  Matrix token_embedding;  // [vocab, dim]
  std::vector<LayerWeights> layers;
  const float* output_norm = nullptr;  // [dim]
  Matrix output;                       // [vocab, dim]; the embedding itself when tied
};

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_WEIGHTS_H_
