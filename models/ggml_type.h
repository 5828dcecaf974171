// ggml's tensor element types as GGUF stores them, and their block sizes.
#ifndef TOYLLM_MODELS_GGML_TYPE_H_
#define TOYLLM_MODELS_GGML_TYPE_H_

#include <cstdint>
#include <string>

namespace toyllm {

enum class GgmlType : uint32_t { kF32 = 0, kF16 = 1, kQ8_0 = 8, kBF16 = 30 };

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
