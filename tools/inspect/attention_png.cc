#include "tools/inspect/attention_png.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/inspect/png_writer.h"

namespace toyllm {
namespace {

// ColorBrewer's "Blues", light to dark; the page (attention_page.html.in) uses the same.
constexpr Rgb kBlues[] = {{247, 251, 255}, {222, 235, 247}, {198, 219, 239},
                          {158, 202, 225}, {107, 174, 214}, {66, 146, 198},
                          {33, 113, 181},  {8, 81, 156},    {8, 48, 107}};
constexpr int kStops = sizeof(kBlues) / sizeof(kBlues[0]);

// Larger pictures are refused rather than filling the memory: 64 Mpixels is 192 MiB of RGB.
constexpr int64_t kMaxPixels = int64_t{64} << 20;

}  // namespace

Rgb AttentionColor(float weight) {
  if (!std::isfinite(weight)) return {220, 30, 60};
  const float t = std::clamp(weight, 0.0f, 1.0f) * (kStops - 1);
  const int i = std::min(kStops - 2, static_cast<int>(t));
  const float f = t - i;
  auto mix = [f](uint8_t a, uint8_t b) {
    return static_cast<uint8_t>(std::lround(a + (static_cast<float>(b) - a) * f));
  };
  return {mix(kBlues[i].r, kBlues[i + 1].r), mix(kBlues[i].g, kBlues[i + 1].g),
          mix(kBlues[i].b, kBlues[i + 1].b)};
}

void FillRect(std::vector<uint8_t>& rgb, int width, int x, int y, int w, int h, Rgb color) {
  for (int row = y; row < y + h; ++row) {
    uint8_t* pixel = &rgb[(static_cast<size_t>(row) * width + x) * 3];
    for (int i = 0; i < w; ++i, pixel += 3) {
      pixel[0] = color.r;
      pixel[1] = color.g;
      pixel[2] = color.b;
    }
  }
}

LayerPngLayout LayerPngLayoutFor(int heads, int positions) {
  LayerPngLayout layout;
  layout.cell = std::max(2, 256 / std::max(1, positions));
  layout.gap = 2;
  layout.columns = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(heads)))));
  layout.rows = (heads + layout.columns - 1) / layout.columns;
  layout.head_size = positions * layout.cell;
  layout.width = layout.gap + layout.columns * (layout.head_size + layout.gap);
  layout.height = layout.gap + layout.rows * (layout.head_size + layout.gap);
  return layout;
}

absl::Status WriteLayerPng(const std::string& path, const AttentionMaps& maps, int layer_index) {
  const int heads = static_cast<int>(maps.heads.size());
  const int t = maps.positions;
  if (layer_index < 0 || layer_index >= static_cast<int>(maps.layers.size())) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": layer index ", layer_index,
                                                   " is not among the ", maps.layers.size(),
                                                   " map layers"));
  }
  if (heads == 0 || t <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no heads or no positions to draw"));
  }
  if (maps.weights.size() != maps.layers.size() * heads * static_cast<size_t>(t) * t) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", maps.weights.size(), " attention weights for ", maps.layers.size(),
        " layers x ", heads, " heads x ", t, " x ", t, " positions"));
  }
  const LayerPngLayout layout = LayerPngLayoutFor(heads, t);
  if (static_cast<int64_t>(layout.width) * layout.height > kMaxPixels) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": a ", layout.width, "x", layout.height,
                                                   " picture is too large; choose fewer heads"));
  }

  std::vector<uint8_t> rgb(static_cast<size_t>(layout.width) * layout.height * 3);
  FillRect(rgb, layout.width, 0, 0, layout.width, layout.height, kAttentionGapColor);
  for (int h = 0; h < heads; ++h) {
    for (int q = 0; q < t; ++q) {
      for (int k = 0; k < t; ++k) {
        FillRect(rgb, layout.width, layout.X(h, k), layout.Y(h, q), layout.cell, layout.cell,
                 AttentionColor(maps.at(layer_index, h, q, k)));
      }
    }
  }
  return WritePng(path, layout.width, layout.height, rgb);
}

}  // namespace toyllm
