#include "models/ggml_type.h"

#include "absl/strings/str_cat.h"

namespace toyllm {

bool LookUpGgmlType(uint32_t id, GgmlTypeTraits* traits) {
  switch (static_cast<GgmlType>(id)) {
    case GgmlType::kF32: *traits = {"f32", 1, 4}; return true;
    case GgmlType::kF16: *traits = {"f16", 1, 2}; return true;
    case GgmlType::kBF16: *traits = {"bf16", 1, 2}; return true;
    case GgmlType::kQ8_0: *traits = {"q8_0", 32, 34}; return true;  // fp16 scale + 32 int8
  }
  return false;
}

std::string GgmlTypeName(GgmlType type) {
  GgmlTypeTraits traits;
  return LookUpGgmlType(static_cast<uint32_t>(type), &traits)
             ? traits.name
             : absl::StrCat("type ", static_cast<uint32_t>(type));
}

}  // namespace toyllm
