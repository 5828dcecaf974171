// The logit lens: reading a layer's residual stream as if it were the top layer's output.
#ifndef TOYLLM_TOOLS_INSPECT_LOGIT_LENS_H_
#define TOYLLM_TOOLS_INSPECT_LOGIT_LENS_H_

#include <vector>

#include "models/model_file.h"

namespace toyllm {

// softmax(output · final_norm(residual)): the next-token probabilities the model would give
// if `residual` (dim floats) came out of its last block.
std::vector<float> LensProbabilities(const ModelFile& model, const std::vector<float>& residual);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_INSPECT_LOGIT_LENS_H_
