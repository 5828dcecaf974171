#include "tools/server/inspect.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "runtime/generate.h"
#include "tools/inspect/explain.h"
#include "tools/inspect/logit_lens.h"
#include "tools/inspect/tap_recorder.h"
#include "tools/page/attention_output.h"
#include "tools/server/completion.h"

namespace toyllm {
namespace {

using nlohmann::json;

// One forward pass over ids with the recorder attached, in the slot's turn.
absl::Status Record(Transformer& transformer, TurnTaking& turns, const std::vector<int>& ids,
                    TapRecorder& recorder) {
  if (ids.empty() || static_cast<int>(ids.size()) > transformer.context_length()) {
    return absl::OutOfRangeError(absl::StrCat("the text is ", ids.size(), " tokens long; the context holds ",
                                              transformer.context_length()));
  }
  turns.Take();
  transformer.set_observer(&recorder);
  absl::StatusOr<std::vector<float>> logits = Prefill(transformer, ids, 0, Transformer::Logits::kLast);
  transformer.set_observer(nullptr);
  turns.Release();
  return logits.status();
}

}  // namespace

absl::StatusOr<AttentionMaps> InspectAttention(Transformer& transformer, TurnTaking& turns,
                                               const Tokenizer& tokenizer, const std::vector<int>& ids) {
  const ModelConfig& config = transformer.config();
  std::vector<int> layers(config.n_layers), heads(config.n_heads);
  std::iota(layers.begin(), layers.end(), 0);
  std::iota(heads.begin(), heads.end(), 0);
  TapRecorder recorder(AttentionTaps(layers));
  if (absl::Status s = Record(transformer, turns, ids, recorder); !s.ok()) return s;
  return AssembleMaps(recorder, layers, heads, ids, tokenizer);
}

json AttentionJson(const AttentionMaps& maps) {
  json weights = json::array();
  for (size_t l = 0; l < maps.layers.size(); ++l) {
    json per_head = json::array();
    for (size_t h = 0; h < maps.heads.size(); ++h) {
      json rows = json::array();
      for (int q = 0; q < maps.positions; ++q) {
        json row = json::array();
        for (int k = 0; k < maps.positions; ++k) row.push_back(maps.at(l, h, q, k));
        rows.push_back(std::move(row));
      }
      per_head.push_back(std::move(rows));
    }
    weights.push_back(std::move(per_head));
  }
  return json{{"layers", maps.layers}, {"heads", maps.heads}, {"positions", maps.positions},
              {"token_ids", maps.token_ids}, {"token_text", maps.token_text}, {"weights", weights}};
}

absl::StatusOr<json> InspectLens(Transformer& transformer, TurnTaking& turns, const ModelFile& model,
                                 const Tokenizer& tokenizer, const std::vector<int>& ids, int position, int top) {
  const ModelConfig& c = model.config;
  if (position < 0 || position >= static_cast<int>(ids.size())) {
    return absl::InvalidArgumentError(absl::StrCat("'position' must be in [0, ", ids.size(), ")"));
  }
  if (top < 1 || top > std::min(c.vocab_size, 50)) return absl::InvalidArgumentError("'top' must be in 1..50");
  TapRecorder recorder(LensTaps(c.n_layers));
  if (absl::Status s = Record(transformer, turns, ids, recorder); !s.ok()) return s;
  json stages = json::array();
  const std::vector<std::vector<LensGuess>> guesses = LensAt(model, recorder, position, top);
  for (int stage = -1; stage < c.n_layers; ++stage) {
    json best = json::array();
    for (const LensGuess& g : guesses[stage + 1]) {
      best.push_back({{"token", TokenText(tokenizer, g.id)}, {"id", g.id}, {"prob", g.prob}});
    }
    stages.push_back({{"name", stage < 0 ? std::string("embed") : absl::StrCat("blk.", stage)}, {"top", best}});
  }
  return json{{"position", position}, {"token", TokenText(tokenizer, ids[position])}, {"stages", stages}};
}

absl::StatusOr<json> InspectExplain(Transformer& transformer, TurnTaking& turns, const Tokenizer& tokenizer,
                                    const std::vector<int>& ids, int layer, int head, int position) {
  const ModelConfig& c = transformer.config();
  if (layer < 0 || layer >= c.n_layers) {
    return absl::InvalidArgumentError(absl::StrCat("'layer' must be in [0, ", c.n_layers, ")"));
  }
  TapRecorder recorder(ExplainTaps(layer));
  if (absl::Status s = Record(transformer, turns, ids, recorder); !s.ok()) return s;
  absl::StatusOr<ExplainedAttention> e = ExplainAttention(c, transformer.weights(), recorder, layer, head, position);
  if (!e.ok()) return e.status();
  json tokens = json::array();
  for (int p = 0; p <= e->query; ++p) tokens.push_back(TokenText(tokenizer, ids[p]));
  return json{{"layer", e->layer}, {"head", e->head}, {"kv_head", e->kv_head}, {"head_dim", e->head_dim},
              {"query", e->query}, {"sqrt_dk", e->sqrt_dk}, {"tokens", tokens}, {"x", e->x},
              {"h", e->normed ? json(e->h) : json(nullptr)}, {"q_raw", e->q_raw}, {"k_raw", e->k_raw},
              {"v", e->v}, {"bias_q", e->bias_q}, {"bias_k", e->bias_k}, {"bias_v", e->bias_v},
              {"q_normed", e->q_normed}, {"k_normed", e->k_normed}, {"q", e->rotated ? json(e->q) : json(nullptr)},
              {"k", e->rotated ? json(e->k) : json(nullptr)}, {"scaled_scores", e->scaled_scores},
              {"weights", e->weights}, {"out", e->out}};
}

}  // namespace toyllm
