// One layer of the attention page's weights as a script file beside index.html, loaded when
// that layer is first shown: a page opened from file:// may load <script src> files next to
// it but may not fetch() them, and a real model's maps (16 layers x 32 heads x 512 x 512 =
// 134 M weights) are far too many to inline.
//
// The file is one call:
//   toyllmAttentionLayer({"layer": L, "heads": [model heads], "positions": T,
//                         "triangle": true|false, "levels": 65534, "weights": "<base64>"});
// "weights" holds, head after head and row (query) after row, each row's keys 0..q when
// "triangle" (every weight above the diagonal is exactly 0, as causal attention's are) or
// 0..T-1 otherwise, each as a little-endian uint16 code: round(w x 65534) for w clamped to
// [0, 1], 65535 for NaN and infinities. code / 65534 is within 0.5 / 65534 (7.7e-6) of the
// float32 weight in attention.npy: the page's three decimals are those of the .npy.
#ifndef TOYLLM_TOOLS_PAGE_ATTENTION_LAYER_SCRIPT_H_
#define TOYLLM_TOOLS_PAGE_ATTENTION_LAYER_SCRIPT_H_

#include <string>

#include "tools/inspect/attention_maps.h"

namespace toyllm {

// Codes 0..kAttentionLevels stand for weights 0..1; kAttentionLevels + 1 for non-finite ones.
inline constexpr int kAttentionLevels = 65534;
// The largest |decoded - float32| of a weight in [0, 1].
inline constexpr double kAttentionMaxError = 0.5 / kAttentionLevels;

// The file name of a model layer's script: "layer3.js".
std::string LayerScriptName(int model_layer);

// The script of map layer `map_layer` (an index into maps.layers, which must be valid).
std::string RenderLayerScript(const AttentionMaps& maps, int map_layer);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_PAGE_ATTENTION_LAYER_SCRIPT_H_
