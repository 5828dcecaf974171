#include "runtime/kv_cache.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "runtime/weight_convert.h"

namespace toyllm {
absl::Status KvCache::Check(const ModelConfig& config, KvTypes types) {
  for (WeightType type : {types.keys, types.values}) {
    if (type == WeightType::kBF16) return absl::InvalidArgumentError("a bf16 KV cache is not supported");
    if (type == WeightType::kQ8_0 && config.head_dim % kQ8Block != 0) {
      return absl::InvalidArgumentError(absl::StrCat("a q8_0 KV cache needs a head dimension that is a multiple of ",
                                                     kQ8Block, "; this model's is ", config.head_dim));
    }
  }
  return absl::OkStatus();
}

KvCache::KvCache(const ModelConfig& config, int context_length, KvTypes types)
    : n_kv_heads_(config.n_kv_heads),
      head_dim_(config.head_dim),
      context_length_(context_length),
      types_(types),
      keys_(new uint8_t[WeightBytes(types.keys, int64_t{config.n_layers} * config.kv_dim() * context_length)]),
      values_(new uint8_t[WeightBytes(types.values, int64_t{config.n_layers} * config.kv_dim() * context_length)]) {}

int64_t KvCache::Bytes(const ModelConfig& config, int context_length, KvTypes types) {
  const int64_t elements = int64_t{config.n_layers} * config.kv_dim() * context_length;
  return WeightBytes(types.keys, elements) + WeightBytes(types.values, elements);
}

void KvCache::Store(int layer, int pos, int n, const float* k, const float* v) {
  const int kv_dim = n_kv_heads_ * head_dim_;
  thread_local std::string encoded;
  for (int t = 0; t < n; ++t) {
    for (int h = 0; h < n_kv_heads_; ++h) {
      const size_t src = static_cast<size_t>(t) * kv_dim + static_cast<size_t>(h) * head_dim_;
      const size_t dst = Offset(layer, h) + static_cast<size_t>(pos + t) * head_dim_;  // in elements
      for (auto [from, type, cache] : {std::tuple{k, types_.keys, &keys_}, std::tuple{v, types_.values, &values_}}) {
        encoded.clear();
        FromFloat32(type, from + src, head_dim_, &encoded);
        std::memcpy(&(*cache)[WeightBytes(type, dst)], encoded.data(), encoded.size());
      }
    }
  }
}

}  // namespace toyllm
