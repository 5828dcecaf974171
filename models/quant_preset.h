// llama-quantize's presets (q4_0 … q6_k, q4_k_m, …): a base type for the weight matrices and
// the per-tensor exceptions llama.cpp's llama_tensor_get_type makes (b4748): more bits for
// the output projection and for some layers' attn_v and ffn_down, and fallbacks for rows
// that are not whole blocks.
#ifndef TOYLLM_MODELS_QUANT_PRESET_H_
#define TOYLLM_MODELS_QUANT_PRESET_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "models/ggml_type.h"

namespace toyllm {

// The K-quant mixes: _S, _M, _L (kNone for every other preset).
enum class QuantMix { kNone, kSmall, kMedium, kLarge };

struct QuantPreset {
  GgmlType base = GgmlType::kF32;
  QuantMix mix = QuantMix::kNone;
};

// "f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k", "q3_k_s", "q3_k_m",
// "q3_k_l", "q4_k_s", "q4_k_m", "q5_k_s", "q5_k_m", "q6_k"; "q3_k", "q4_k" and "q5_k" are
// llama-quantize's aliases of the _M mixes.
absl::StatusOr<QuantPreset> ParseQuantPreset(const std::string& name);
std::string QuantPresetName(const QuantPreset& preset);
extern const char kQuantPresetNames[];  // for help texts and errors

// general.file_type, llama.cpp's LLAMA_FTYPE_* (not the tensor type ids).
uint32_t FileType(const QuantPreset& preset);

// A weight matrix as the preset's rules see it.
struct TensorSlot {
  std::string name;  // llama.cpp's, e.g. "blk.3.attn_v.weight"
  int cols;          // ggml ne[0], the row length
  int layer;         // its block's index; -1 outside the blocks
  int n_layers;
  int n_gqa;          // query heads per KV head
  bool is_output;     // output.weight, or the token embedding when it doubles as the output
};

// The type `preset` stores that matrix in.
GgmlType PresetTensorType(const QuantPreset& preset, const TensorSlot& slot);

}  // namespace toyllm

#endif  // TOYLLM_MODELS_QUANT_PRESET_H_
