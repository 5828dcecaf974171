// A matrix of values as a PNG heatmap (rows top to bottom, columns left to right): what
// `toyllm patch` draws of layer × head and layer × position.
#ifndef TOYLLM_TOOLS_INSPECT_HEATMAP_PNG_H_
#define TOYLLM_TOOLS_INSPECT_HEATMAP_PNG_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/inspect/attention_png.h"

namespace toyllm {

// A restored fraction's color: 0 white through blue to 1 dark blue (AttentionColor), and
// below 0 (the patch moved the answer further away) white through red to -1; clamped.
Rgb DivergingColor(float value);

// Writes values [rows, cols] as cells of `cell` pixels (1..64) framed by kAttentionGapColor, atomically.
absl::Status WriteHeatmapPng(const std::string& path, const std::vector<float>& values, int rows, int cols,
                             int cell);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_INSPECT_HEATMAP_PNG_H_
