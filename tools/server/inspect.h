// The inspection routes behind the live page, POST /v1/inspect/attention, /lens and
// /explain: a text through one forward pass on a leased slot with a TapRecorder
// (tools/inspect), answered as JSON. The attention JSON is the attention page's own data
// (tools/page/attention_page.h), so the same numbers as `toyllm attention` writes.
#ifndef TOYLLM_TOOLS_SERVER_INSPECT_H_
#define TOYLLM_TOOLS_SERVER_INSPECT_H_

#include <vector>

#include "absl/status/statusor.h"
#include "models/model_file.h"
#include "nlohmann/json.hpp"
#include "tokenizer/tokenizer.h"
#include "tools/inspect/attention_maps.h"
#include "tools/server/slot_pool.h"

namespace toyllm {

// The attention maps of every layer and head over `ids`.
absl::StatusOr<AttentionMaps> InspectAttention(Transformer& transformer, TurnTaking& turns,
                                               const Tokenizer& tokenizer, const std::vector<int>& ids);

// {"layers", "heads", "positions", "token_ids", "token_text", "weights": [l][h][q][k]}.
nlohmann::json AttentionJson(const AttentionMaps& maps);

// The logit lens at `position`: for the embedding and each block, the `top` most likely
// next tokens, {"position", "stages": [{"name", "top": [{"token", "id", "prob"}]}]}.
absl::StatusOr<nlohmann::json> InspectLens(Transformer& transformer, TurnTaking& turns, const ModelFile& model,
                                           const Tokenizer& tokenizer, const std::vector<int>& ids,
                                           int position, int top);

// toyllm explain's numbers for one layer, head and query position (tools/inspect/explain.h):
// {"layer", "head", "kv_head", "head_dim", "query", "sqrt_dk", "tokens", "x", "h", "q_raw",
//  "k_raw", "v", "q", "k", "scaled_scores", "weights", "out"}.
absl::StatusOr<nlohmann::json> InspectExplain(Transformer& transformer, TurnTaking& turns,
                                              const Tokenizer& tokenizer, const std::vector<int>& ids,
                                              int layer, int head, int position);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_SERVER_INSPECT_H_
