#include "tools/page/attention_layer_script.h"

#include <cmath>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace toyllm {
namespace {

uint16_t Code(float w) {
  if (!std::isfinite(w)) return kAttentionLevels + 1;
  const float clamped = std::fmin(1.0f, std::fmax(0.0f, w));
  return static_cast<uint16_t>(std::lround(static_cast<double>(clamped) * kAttentionLevels));
}

// Whether every weight above the diagonal is exactly 0, so that rows can stop at it.
bool IsCausal(const AttentionMaps& maps, int map_layer) {
  const int t = maps.positions;
  for (int h = 0; h < static_cast<int>(maps.heads.size()); ++h) {
    for (int q = 0; q < t; ++q) {
      for (int k = q + 1; k < t; ++k) {
        if (maps.at(map_layer, h, q, k) != 0.0f) return false;
      }
    }
  }
  return true;
}

}  // namespace

std::string LayerScriptName(int model_layer) { return absl::StrCat("layer", model_layer, ".js"); }

std::string RenderLayerScript(const AttentionMaps& maps, int map_layer) {
  const int t = maps.positions;
  const bool triangle = IsCausal(maps, map_layer);
  std::string bytes;
  bytes.reserve(maps.heads.size() * (triangle ? t * (t + 1) / 2 : t * t) * 2);
  for (int h = 0; h < static_cast<int>(maps.heads.size()); ++h) {
    for (int q = 0; q < t; ++q) {
      for (int k = 0, end = triangle ? q + 1 : t; k < end; ++k) {
        const uint16_t code = Code(maps.at(map_layer, h, q, k));
        bytes.push_back(static_cast<char>(code & 0xff));
        bytes.push_back(static_cast<char>(code >> 8));
      }
    }
  }
  const nlohmann::json header = {{"layer", maps.layers[map_layer]},
                                 {"heads", maps.heads},
                                 {"positions", t},
                                 {"triangle", triangle},
                                 {"levels", kAttentionLevels}};
  std::string json = header.dump();
  json.pop_back();  // the closing brace: the weights follow
  return absl::StrCat("toyllmAttentionLayer(", json, ",\"weights\":\"", absl::Base64Escape(bytes),
                      "\"});\n");
}

}  // namespace toyllm
