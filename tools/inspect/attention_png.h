// Attention as a picture: every head of one map layer as a T × T heatmap (rows = query
// positions top to bottom, columns = key positions left to right, darker = more weight),
// the heads side by side in a grid, saved as a PNG. No text: the page (attention_page.h)
// is the place for token labels.
#ifndef TOYLLM_TOOLS_INSPECT_ATTENTION_PNG_H_
#define TOYLLM_TOOLS_INSPECT_ATTENTION_PNG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/inspect/attention_maps.h"

namespace toyllm {

struct Rgb {
  uint8_t r, g, b;
  bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
};

// The color of a weight: white (0) through light blue to dark blue (1), the "Blues" ramp,
// whose lightness falls steadily with the weight. Weights outside [0, 1] are clamped; NaN
// and infinities are red, so that they stand out.
Rgb AttentionColor(float weight);

// Paints the w × h rectangle at (x, y) of an RGB image `width` pixels wide.
void FillRect(std::vector<uint8_t>& rgb, int width, int x, int y, int w, int h, Rgb color);

// The gray between and around the heads.
inline constexpr Rgb kAttentionGapColor = {160, 160, 160};

// Where things are in the picture of a layer with `heads` heads over `positions` tokens:
// heads in row-major order in a grid of `columns` = ceil(sqrt(heads)) columns; each head is
// positions × positions cells of `cell` = max(2, 256 / positions) pixels square; `gap`
// pixels of kAttentionGapColor separate the heads and frame the picture.
struct LayerPngLayout {
  int cell = 0;
  int gap = 0;
  int columns = 0;
  int rows = 0;
  int width = 0;
  int height = 0;
  int head_size = 0;  // positions * cell
  // The top-left pixel of head h's cell (query, key).
  int X(int head, int key) const { return gap + (head % columns) * (head_size + gap) + key * cell; }
  int Y(int head, int query) const { return gap + (head / columns) * (head_size + gap) + query * cell; }
};
LayerPngLayout LayerPngLayoutFor(int heads, int positions);

// Writes the heads of map layer `layer_index` (an index into maps.layers, not a model layer
// number) as a PNG laid out as LayerPngLayoutFor says, atomically.
absl::Status WriteLayerPng(const std::string& path, const AttentionMaps& maps, int layer_index);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_INSPECT_ATTENTION_PNG_H_
