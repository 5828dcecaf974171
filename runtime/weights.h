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
// Each row is stored in `type` (for a block type, whole blocks); rows follow one another,
// or, in a slice of a wider matrix's columns (Columns), lie `stride` bytes apart.
struct Matrix {
  const void* data = nullptr;
  int rows = 0;
  int cols = 0;
  WeightType type = WeightType::kF32;
  int64_t stride = 0;  // bytes from one row's start to the next; 0: row_bytes()

  // The bytes of one row's elements.
  int64_t row_bytes() const { return WeightBytes(type, cols); }
  int64_t row_stride() const { return stride != 0 ? stride : row_bytes(); }
  bool packed() const { return row_stride() == row_bytes(); }
  const void* row(int r) const { return static_cast<const char*>(data) + r * row_stride(); }
  // The elements of a float32 matrix; only meaningful when type is kF32.
  const float* floats() const { return static_cast<const float*>(data); }
};

// Views of part of m, used in place: rows [begin, begin + count), and columns [begin,
// begin + count) of every row, which for a block type must start and end on whole blocks.
inline Matrix Rows(const Matrix& m, int begin, int count) {
  return {m.row(begin), count, m.cols, m.type, m.stride};
}
inline Matrix Columns(const Matrix& m, int begin, int count) {
  return {static_cast<const char*>(m.data) + WeightBytes(m.type, begin), m.rows, count, m.type,
          m.row_stride()};
}

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
