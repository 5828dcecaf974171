// The KV cache: every position's keys and values, kept so that a new token attends to the
// whole past without recomputing it. Stored as float32, or, as llama.cpp's -ctk/-ctv,
// as f16 (half the memory and half the bytes a long context reads) or q8_0 (not quite a
// third): attention reads them back as float32.
#ifndef TOYLLM_RUNTIME_KV_CACHE_H_
#define TOYLLM_RUNTIME_KV_CACHE_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "runtime/model_config.h"
#include "runtime/weight_type.h"
#include "runtime/weights.h"

namespace toyllm {

// The element types of the cached keys and of the cached values: f32, f16 or q8_0.
struct KvTypes {
  WeightType keys = WeightType::kF32;
  WeightType values = WeightType::kF32;
};

class KvCache {
 public:
  // Fails when a type is bf16, or is q8_0 and a head's dimension is not a
  // whole number of its 32-element blocks.
  static absl::Status Check(const ModelConfig& config, KvTypes types);

  KvCache(const ModelConfig& config, int context_length, KvTypes types = {});

  static int64_t Bytes(const ModelConfig& config, int context_length, KvTypes types = {});

  // Copies n rows of keys and values ([n, n_kv_heads * head_dim] each) into positions
  // pos..pos+n-1 of a layer, encoded as the cache's types.
  void Store(int layer, int pos, int n, const float* k, const float* v);

  // One kv head's keys (or values) at positions 0..n-1: [n, head_dim] in the cache's type,
  // contiguous, so one head's scores over the past read one block of memory.
  Matrix keys(int layer, int kv_head, int n) const { return Rows(keys_, types_.keys, layer, kv_head, n); }
  Matrix values(int layer, int kv_head, int n) const { return Rows(values_, types_.values, layer, kv_head, n); }

 private:
  size_t Offset(int layer, int kv_head) const {
    return (static_cast<size_t>(layer) * n_kv_heads_ + kv_head) * context_length_ * head_dim_;
  }
  Matrix Rows(const std::unique_ptr<uint8_t[]>& cache, WeightType type, int layer, int kv_head, int n) const {
    return Matrix{&cache[WeightBytes(type, Offset(layer, kv_head))], n, head_dim_, type};
  }

  int n_kv_heads_;
  int head_dim_;
  int context_length_;
  KvTypes types_;
  // [layer, kv_head, position, head_dim] as types_.keys, and the same as types_.values.
  // Left uninitialised, so that only the pages of positions stored become resident: a
  // context of the model's 131,072 positions costs what the tokens seen so far fill, not
  // 8 GiB of zeros up front. Attention reads only positions already stored.
  std::unique_ptr<uint8_t[]> keys_;
  std::unique_ptr<uint8_t[]> values_;
};

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KV_CACHE_H_
