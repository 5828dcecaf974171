// What decoding one token reads from a model's weights, as the file stores them: the
// numerator of the bandwidth bound on decode speed.
#ifndef TOYLLM_TOOLS_CLI_WEIGHT_TRAFFIC_H_
#define TOYLLM_TOOLS_CLI_WEIGHT_TRAFFIC_H_

#include <cstdint>
#include <string>

#include "models/model_file.h"

namespace toyllm {

// Stored bytes of every weight matrix one decoded token reads: each layer's seven, the
// output projection, and a single row of the token embedding (which is gathered, not
// multiplied, unless it doubles as the output). From the file's tensor types where it
// lists them (GGUF); float32 otherwise. Norms are too small to count.
int64_t WeightBytesPerToken(const ModelFile& model);

// The stored type of the layers' first matrix ("f32", "q8_0", "q4_k", …); "f32" for files
// without a tensor list (llama2.c).
std::string LayerWeightType(const ModelFile& model);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_WEIGHT_TRAFFIC_H_
