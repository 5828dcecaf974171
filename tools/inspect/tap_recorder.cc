#include "tools/inspect/tap_recorder.h"

namespace toyllm {

void TapRecorder::Observe(const TapData& tap) {
  if (wanted_.count({tap.tap, tap.layer}) == 0) return;
  std::vector<std::vector<float>>& rows = rows_[{tap.tap, tap.layer, tap.head}];
  const bool causal = tap.tap == Tap::kScores || tap.tap == Tap::kWeights;
  for (int r = 0; r < tap.rows; ++r) {
    const int position = tap.pos + r;
    if (static_cast<int>(rows.size()) <= position) rows.resize(position + 1);
    const float* row = tap.data + static_cast<size_t>(r) * tap.cols;
    rows[position].assign(row, row + (causal ? position + 1 : tap.cols));
  }
}

const std::vector<std::vector<float>>* TapRecorder::Rows(Tap tap, int layer, int head) const {
  const auto it = rows_.find({tap, layer, head});
  return it == rows_.end() ? nullptr : &it->second;
}

}  // namespace toyllm
