#include "models/quant_preset.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace toyllm {
namespace {

struct Named {
  const char* name;
  QuantPreset preset;
  uint32_t file_type;
};

constexpr Named kPresets[] = {
    {"f32", {GgmlType::kF32}, 0},
    {"f16", {GgmlType::kF16}, 1},
    {"bf16", {GgmlType::kBF16}, 32},
    {"q4_0", {GgmlType::kQ4_0}, 2},
    {"q4_1", {GgmlType::kQ4_1}, 3},
    {"q5_0", {GgmlType::kQ5_0}, 8},
    {"q5_1", {GgmlType::kQ5_1}, 9},
    {"q8_0", {GgmlType::kQ8_0}, 7},
    {"q2_k", {GgmlType::kQ2_K}, 10},
    {"q3_k_s", {GgmlType::kQ3_K, QuantMix::kSmall}, 11},
    {"q3_k_m", {GgmlType::kQ3_K, QuantMix::kMedium}, 12},
    {"q3_k_l", {GgmlType::kQ3_K, QuantMix::kLarge}, 13},
    {"q4_k_s", {GgmlType::kQ4_K, QuantMix::kSmall}, 14},
    {"q4_k_m", {GgmlType::kQ4_K, QuantMix::kMedium}, 15},
    {"q5_k_s", {GgmlType::kQ5_K, QuantMix::kSmall}, 16},
    {"q5_k_m", {GgmlType::kQ5_K, QuantMix::kMedium}, 17},
    {"q6_k", {GgmlType::kQ6_K}, 18},
};

bool Is(const QuantPreset& p, GgmlType base, QuantMix mix = QuantMix::kNone) {
  return p.base == base && p.mix == mix;
}

// llama.cpp's use_more_bits: the first and last eighth of the layers, and every third between.
bool UseMoreBits(int layer, int n_layers) {
  return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

// The type before the fallback for rows that are not whole blocks.
GgmlType Preferred(const QuantPreset& p, const TensorSlot& t) {
  using T = GgmlType;
  using M = QuantMix;
  if (t.is_output) {
    if (t.cols % kSuperBlock != 0) return T::kQ8_0;
    return p.base == T::kQ8_0 ? T::kQ8_0 : T::kQ6_K;
  }
  if (absl::StrContains(t.name, "attn_v.weight")) {
    if (Is(p, T::kQ2_K)) return t.n_gqa >= 4 ? T::kQ4_K : T::kQ3_K;
    if (Is(p, T::kQ3_K, M::kMedium)) return t.layer < 2 ? T::kQ5_K : T::kQ4_K;
    if (Is(p, T::kQ3_K, M::kLarge)) return T::kQ5_K;
    if ((Is(p, T::kQ4_K, M::kMedium) || Is(p, T::kQ5_K, M::kMedium)) && UseMoreBits(t.layer, t.n_layers)) {
      return T::kQ6_K;
    }
    if (Is(p, T::kQ4_K, M::kSmall) && t.layer < 4) return T::kQ5_K;
    return p.base;
  }
  if (absl::StrContains(t.name, "ffn_down")) {
    if (Is(p, T::kQ2_K)) return T::kQ3_K;
    if (Is(p, T::kQ3_K, M::kMedium)) return t.layer < t.n_layers / 16 ? T::kQ5_K : T::kQ4_K;
    if (Is(p, T::kQ3_K, M::kLarge)) return T::kQ5_K;
    if ((Is(p, T::kQ4_K, M::kMedium) || Is(p, T::kQ5_K, M::kMedium)) && UseMoreBits(t.layer, t.n_layers)) {
      return T::kQ6_K;
    }
    if (Is(p, T::kQ4_K, M::kSmall) && t.layer < t.n_layers / 8) return T::kQ5_K;
    return p.base;
  }
  if (absl::StrContains(t.name, "attn_output.weight")) {
    if (Is(p, T::kQ2_K)) return T::kQ3_K;
    if (Is(p, T::kQ3_K, M::kMedium)) return T::kQ4_K;
    if (Is(p, T::kQ3_K, M::kLarge)) return T::kQ5_K;
  }
  return p.base;
}

}  // namespace

const char kQuantPresetNames[] =
    "f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q3_k_s, q3_k_m (q3_k), q3_k_l, "
    "q4_k_s, q4_k_m (q4_k), q5_k_s, q5_k_m (q5_k), q6_k";

absl::StatusOr<QuantPreset> ParseQuantPreset(const std::string& name) {
  const std::string full = name == "q3_k" || name == "q4_k" || name == "q5_k" ? name + "_m" : name;
  for (const Named& n : kPresets) {
    if (full == n.name) return n.preset;
  }
  return absl::InvalidArgumentError(absl::StrCat("--type: '", name, "' is not one of ", kQuantPresetNames));
}

std::string QuantPresetName(const QuantPreset& preset) {
  for (const Named& n : kPresets) {
    if (n.preset.base == preset.base && n.preset.mix == preset.mix) return n.name;
  }
  return GgmlTypeName(preset.base);
}

uint32_t FileType(const QuantPreset& preset) {
  for (const Named& n : kPresets) {
    if (n.preset.base == preset.base && n.preset.mix == preset.mix) return n.file_type;
  }
  return 0;
}

GgmlType PresetTensorType(const QuantPreset& preset, const TensorSlot& slot) {
  if (!IsBlockQuantized(preset.base)) return preset.base;
  GgmlType type = Preferred(preset, slot);
  if (slot.cols % BlockShapeOf(type).elements == 0) return type;
  // llama.cpp's fallbacks: for Q2_K and Q3_K the 32-block type with a non-linear grid.
  switch (type) {
    case GgmlType::kQ2_K:
    case GgmlType::kQ3_K: type = GgmlType::kIQ4_NL; break;
    case GgmlType::kQ4_K: type = GgmlType::kQ5_0; break;
    case GgmlType::kQ5_K: type = GgmlType::kQ5_1; break;
    case GgmlType::kQ6_K: type = GgmlType::kQ8_0; break;
    default: break;
  }
  return slot.cols % BlockShapeOf(type).elements == 0 ? type : GgmlType::kF16;
}

}  // namespace toyllm
