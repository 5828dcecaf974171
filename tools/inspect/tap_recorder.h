// A TapObserver that keeps chosen intermediates of the forward pass, row by position, so
// that the inspection commands show exactly what generation computed.
#ifndef TOYLLM_TOOLS_INSPECT_TAP_RECORDER_H_
#define TOYLLM_TOOLS_INSPECT_TAP_RECORDER_H_

#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/taps.h"

namespace toyllm {

class TapRecorder : public TapObserver {
 public:
  // Records the taps named by (tap, layer); layer -1 for embed, final_norm and logits.
  explicit TapRecorder(std::set<std::pair<Tap, int>> wanted) : wanted_(std::move(wanted)) {}

  void Observe(const TapData& tap) override;

  // Recorded rows of a tap by position (head -1 unless per head), or nullptr. Attention
  // weights rows stop at their own position: causal, the rest would be zero.
  const std::vector<std::vector<float>>* Rows(Tap tap, int layer, int head = -1) const;

 private:
  std::set<std::pair<Tap, int>> wanted_;
  std::map<std::tuple<Tap, int, int>, std::vector<std::vector<float>>> rows_;
};

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_INSPECT_TAP_RECORDER_H_
