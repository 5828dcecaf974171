// ggml's tensor element types as GGUF stores them, and their block sizes.
#ifndef TOYLLM_MODELS_GGML_TYPE_H_
#define TOYLLM_MODELS_GGML_TYPE_H_

#include <cstdint>
#include <string>

#include "runtime/weight_type.h"

namespace toyllm {

// The runtime numbers its weight types as ggml does; GGUF files use the same ids.
using GgmlType = WeightType;

struct GgmlTypeTraits {
  const char* name;
  int block_elements;  // weights per block (1 for plain floats)
  int block_bytes;
};

// Traits of the types toyllm reads; false for any other id (all of them are at most
// kMaxGgmlTypeId).
constexpr uint32_t kMaxGgmlTypeId = 39;
bool LookUpGgmlType(uint32_t id, GgmlTypeTraits* traits);

std::string GgmlTypeName(GgmlType type);

// The first of n_blocks blocks of `type` at `data` with an infinite or NaN f16 scale, or −1:
// such a block would turn every product it enters into NaN.
int64_t FirstNonFiniteScale(GgmlType type, const uint8_t* data, int64_t n_blocks);

// What a type id LookUpGgmlType refuses is: its ggml name (the I-quants, ternary types,
// integers), for the one-line error.
std::string UnsupportedGgmlType(uint32_t id);

// The types toyllm reads, by name, for that error's "supported" list.
constexpr char kSupportedGgmlTypes[] =
    "f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl";

}  // namespace toyllm

#endif  // TOYLLM_MODELS_GGML_TYPE_H_
