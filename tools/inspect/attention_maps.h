// Attention maps captured from a forward pass: for chosen layers and heads, the softmax
// weights of every query position over every key position, and the tokens they belong to.
#ifndef TOYLLM_TOOLS_INSPECT_ATTENTION_MAPS_H_
#define TOYLLM_TOOLS_INSPECT_ATTENTION_MAPS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace toyllm {

struct AttentionMaps {
  std::vector<int> layers;  // model layer index of each map layer
  std::vector<int> heads;   // model head index of each map head
  int positions = 0;        // T
  // [layers.size(), heads.size(), T, T]; row i holds query position i's weights over keys
  // 0..T-1 (zero above the diagonal: causal).
  std::vector<float> weights;
  std::vector<int> token_ids;           // T ids
  std::vector<std::string> token_pieces;  // T vocabulary entries, e.g. "▁time"
  std::vector<std::string> token_text;    // the same as text ("▁" shown as a space)

  // The shape of `weights`, as attention.npy stores it.
  std::vector<int64_t> shape() const {
    return {static_cast<int64_t>(layers.size()), static_cast<int64_t>(heads.size()), positions, positions};
  }

  float at(int layer, int head, int query, int key) const {
    return weights[((static_cast<size_t>(layer) * heads.size() + head) * positions + query) *
                       positions + key];
  }
};

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_INSPECT_ATTENTION_MAPS_H_
