// Head ablation: a head's output (its slice of kqv_out, before W_O) replaced by zeros or by
// its mean over a reference text, so that what the model still gets right without it shows
// what the head contributed.
#ifndef TOYLLM_TOOLS_INSPECT_HEAD_ABLATION_H_
#define TOYLLM_TOOLS_INSPECT_HEAD_ABLATION_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/intervention.h"
#include "runtime/model_config.h"
#include "runtime/transformer.h"

namespace toyllm {

struct HeadRef {
  int layer = 0;
  int head = 0;
  bool operator<(const HeadRef& o) const { return std::pair(layer, head) < std::pair(o.layer, o.head); }
  bool operator==(const HeadRef& o) const { return layer == o.layer && head == o.head; }
};

// "2.0,1.3": layer.head pairs, each inside the config's layers and heads. Errors name `flag`.
absl::StatusOr<std::vector<HeadRef>> ParseHeadList(const std::string& flag, const std::string& text,
                                                   const ModelConfig& config);

class HeadAblation : public Intervention {
 public:
  // The heads' outputs set to zero.
  HeadAblation(std::vector<HeadRef> heads, int head_dim);

  // The heads' outputs set to their mean over the positions of `reference` (BOS first), as
  // `transformer` computes them with nothing ablated. Overwrites its KV cache and detaches
  // its observer: attach one afterwards.
  static absl::StatusOr<HeadAblation> Mean(std::vector<HeadRef> heads, Transformer& transformer,
                                           absl::Span<const int> reference);

  void Edit(Tap tap, int layer, int pos, int rows, int cols, float* data) override;

  const std::vector<HeadRef>& heads() const { return heads_; }

 private:
  std::vector<HeadRef> heads_;
  int head_dim_;
  std::map<HeadRef, std::vector<float>> replacement_;  // head_dim floats per head
};

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_INSPECT_HEAD_ABLATION_H_
