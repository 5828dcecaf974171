#include "tools/inspect/heatmap_png.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "tools/inspect/png_writer.h"

namespace toyllm {

Rgb DivergingColor(float value) {
  if (!std::isfinite(value) || value >= 0) return AttentionColor(value);
  // ColorBrewer's "Reds" ends, white to dark red.
  const float f = std::min(1.0f, -value);
  auto mix = [f](int a, int b) { return static_cast<uint8_t>(std::lround(a + (b - a) * f)); };
  return {mix(255, 165), mix(245, 15), mix(240, 21)};
}

absl::Status WriteHeatmapPng(const std::string& path, const std::vector<float>& values, int rows, int cols,
                             int cell) {
  if (rows < 1 || cols < 1 || cell < 1 || cell > 64 || values.size() != static_cast<size_t>(rows) * cols) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", values.size(), " values for a ", rows, " x ",
                                                   cols, " heatmap of ", cell, "-pixel cells"));
  }
  constexpr int kGap = 2;
  const int width = 2 * kGap + cols * cell, height = 2 * kGap + rows * cell;
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
  FillRect(rgb, width, 0, 0, width, height, kAttentionGapColor);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      FillRect(rgb, width, kGap + c * cell, kGap + r * cell, cell, cell, DivergingColor(values[r * cols + c]));
    }
  }
  return WritePng(path, width, height, rgb);
}

}  // namespace toyllm
