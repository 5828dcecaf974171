#include "models/ggml_type.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace toyllm {

bool LookUpGgmlType(uint32_t id, GgmlTypeTraits* traits) {
  const char* name = nullptr;
  switch (static_cast<GgmlType>(id)) {
    case GgmlType::kF32: name = "f32"; break;
    case GgmlType::kF16: name = "f16"; break;
    case GgmlType::kBF16: name = "bf16"; break;
    case GgmlType::kQ4_0: name = "q4_0"; break;
    case GgmlType::kQ4_1: name = "q4_1"; break;
    case GgmlType::kQ5_0: name = "q5_0"; break;
    case GgmlType::kQ5_1: name = "q5_1"; break;
    case GgmlType::kQ8_0: name = "q8_0"; break;
    case GgmlType::kQ2_K: name = "q2_k"; break;
    case GgmlType::kQ3_K: name = "q3_k"; break;
    case GgmlType::kQ4_K: name = "q4_k"; break;
    case GgmlType::kQ5_K: name = "q5_k"; break;
    case GgmlType::kQ6_K: name = "q6_k"; break;
    case GgmlType::kIQ4_NL: name = "iq4_nl"; break;
  }
  if (name == nullptr) return false;
  const BlockShape shape = BlockShapeOf(static_cast<GgmlType>(id));
  *traits = {name, shape.elements, shape.bytes};
  return true;
}

namespace {

// Byte offsets of a block's f16 scales (ggml-common.h's block_* structs).
std::vector<int> ScaleOffsets(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0:
    case GgmlType::kQ5_0:
    case GgmlType::kIQ4_NL:
    case GgmlType::kQ8_0: return {0};
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_1:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K: return {0, 2};
    case GgmlType::kQ2_K: return {80, 82};
    case GgmlType::kQ3_K: return {108};
    case GgmlType::kQ6_K: return {208};
    default: return {};
  }
}

}  // namespace

int64_t FirstNonFiniteScale(GgmlType type, const uint8_t* data, int64_t n_blocks) {
  const std::vector<int> offsets = ScaleOffsets(type);
  const int block_bytes = BlockShapeOf(type).bytes;
  for (int64_t b = 0; b < n_blocks; ++b) {
    for (int offset : offsets) {
      uint16_t h;
      std::memcpy(&h, data + b * block_bytes + offset, 2);
      if ((h & 0x7c00) == 0x7c00) return b;  // f16 exponent all ones: infinity or NaN
    }
  }
  return -1;
}

std::string UnsupportedGgmlType(uint32_t id) {
  switch (id) {
    case 9: return "q8_1 (llama.cpp's activation type, never a weight)";
    case 15: return "q8_k (llama.cpp's activation type, never a weight)";
    case 16: return "iq2_xxs";
    case 17: return "iq2_xs";
    case 18: return "iq3_xxs";
    case 19: return "iq1_s";
    case 21: return "iq3_s";
    case 22: return "iq2_s";
    case 23: return "iq4_xs";
    case 24: return "i8";
    case 25: return "i16";
    case 26: return "i32";
    case 27: return "i64";
    case 28: return "f64";
    case 29: return "iq1_m";
    case 34: return "tq1_0";
    case 35: return "tq2_0";
    case 39: return "mxfp4";
  }
  return "an unknown type";
}

std::string GgmlTypeName(GgmlType type) {
  GgmlTypeTraits traits;
  return LookUpGgmlType(static_cast<uint32_t>(type), &traits)
             ? traits.name
             : absl::StrCat("type ", static_cast<uint32_t>(type));
}

}  // namespace toyllm
