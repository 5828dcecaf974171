// The KV cache: every position's keys and values, kept so that a new token attends to the
// whole past without recomputing it.
#ifndef TOYLLM_RUNTIME_KV_CACHE_H_
#define TOYLLM_RUNTIME_KV_CACHE_H_

#include <cstdint>
#include <vector>

#include "runtime/model_config.h"

namespace toyllm {

class KvCache {
 public:
  KvCache(const ModelConfig& config, int context_length);

  static int64_t Bytes(const ModelConfig& config, int context_length);

  // Copies n rows of keys and values ([n, n_kv_heads * head_dim] each) into positions
  // pos..pos+n-1 of a layer.
  void Store(int layer, int pos, int n, const float* k, const float* v);

  // One kv head's keys (or values) at all positions: [context_length, head_dim], contiguous,
  // so one head's scores over the past read one block of memory.
  const float* keys(int layer, int kv_head) const { return &keys_[Offset(layer, kv_head)]; }
  const float* values(int layer, int kv_head) const { return &values_[Offset(layer, kv_head)]; }

 private:
  size_t Offset(int layer, int kv_head) const {
    return (static_cast<size_t>(layer) * n_kv_heads_ + kv_head) * context_length_ * head_dim_;
  }

  int n_kv_heads_;
  int head_dim_;
  int context_length_;
  std::vector<float> keys_;    // [layer, kv_head, position, head_dim]
  std::vector<float> values_;  // same layout
};

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KV_CACHE_H_
