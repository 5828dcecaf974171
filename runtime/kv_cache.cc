#include "runtime/kv_cache.h"

#include <algorithm>

namespace toyllm {

KvCache::KvCache(const ModelConfig& config, int context_length)
    : n_kv_heads_(config.n_kv_heads),
      head_dim_(config.head_dim),
      context_length_(context_length),
      keys_(static_cast<size_t>(config.n_layers) * config.kv_dim() * context_length),
      values_(keys_.size()) {}

int64_t KvCache::Bytes(const ModelConfig& config, int context_length) {
  return int64_t{2} * config.n_layers * config.kv_dim() * context_length * int64_t{sizeof(float)};
}

void KvCache::Store(int layer, int pos, int n, const float* k, const float* v) {
  const int kv_dim = n_kv_heads_ * head_dim_;
  for (int t = 0; t < n; ++t) {
    for (int h = 0; h < n_kv_heads_; ++h) {
      const size_t src = static_cast<size_t>(t) * kv_dim + static_cast<size_t>(h) * head_dim_;
      const size_t dst = Offset(layer, h) + static_cast<size_t>(pos + t) * head_dim_;
      std::copy_n(k + src, head_dim_, &keys_[dst]);
      std::copy_n(v + src, head_dim_, &values_[dst]);
    }
  }
}

}  // namespace toyllm
