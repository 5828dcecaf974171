// The logit lens: reading a layer's residual stream as if it were the top layer's output.
#ifndef TOYLLM_TOOLS_INSPECT_LOGIT_LENS_H_
#define TOYLLM_TOOLS_INSPECT_LOGIT_LENS_H_

#include <set>
#include <utility>
#include <vector>

#include "models/model_file.h"
#include "tools/inspect/tap_recorder.h"

namespace toyllm {

// softmax(output · final_norm(residual)): the next-token probabilities the model would give
// if `residual` (dim floats) came out of its last block.
std::vector<float> LensProbabilities(const ModelFile& model, const std::vector<float>& residual);

// The taps a recorder must keep for the lens: the embedding and every block's output.
std::set<std::pair<Tap, int>> LensTaps(int n_layers);

struct LensGuess {
  int id;
  float prob;
};

// At `position`, for each stage — the embedding, then blocks 0..n_layers-1 (the last is the
// model's real prediction) — the `top` most likely next tokens, most likely first.
std::vector<std::vector<LensGuess>> LensAt(const ModelFile& model, const TapRecorder& recorder, int position,
                                           int top);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_INSPECT_LOGIT_LENS_H_
