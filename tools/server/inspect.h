// The inspection routes behind the live page, POST /v1/inspect/attention and
// /v1/inspect/lens: a text through one forward pass on a leased slot with a TapRecorder
// (tools/inspect), answered as JSON. The attention JSON is the attention page's own data
// (tools/page/attention_page.h), so the same numbers as `toyllm attention` writes.
#ifndef TOYLLM_TOOLS_SERVER_INSPECT_H_
#define TOYLLM_TOOLS_SERVER_INSPECT_H_

#include <vector>

#include "absl/status/statusor.h"
#include "models/model_file.h"
#include "nlohmann/json.hpp"
#include "tokenizer/tokenizer.h"
#include "tools/server/slot_pool.h"

namespace toyllm {

// {"layers", "heads", "positions", "token_ids", "token_text", "weights": [l][h][q][k]} of
// every layer and head over `ids`.
absl::StatusOr<nlohmann::json> InspectAttention(Transformer& transformer, TurnTaking& turns,
                                                const Tokenizer& tokenizer, const std::vector<int>& ids);

// The logit lens at `position`: for the embedding and each block, the `top` most likely
// next tokens, {"position", "stages": [{"name", "top": [{"token", "id", "prob"}]}]}.
absl::StatusOr<nlohmann::json> InspectLens(Transformer& transformer, TurnTaking& turns, const ModelFile& model,
                                           const Tokenizer& tokenizer, const std::vector<int>& ids,
                                           int position, int top);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_SERVER_INSPECT_H_
