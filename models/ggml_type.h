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

// Traits of the types toyllm reads; false for any other id.
bool LookUpGgmlType(uint32_t id, GgmlTypeTraits* traits);

std::string GgmlTypeName(GgmlType type);

}  // namespace toyllm

#endif  // TOYLLM_MODELS_GGML_TYPE_H_
