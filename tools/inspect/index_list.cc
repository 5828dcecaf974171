#include "tools/inspect/index_list.h"

#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace toyllm {

absl::StatusOr<std::vector<int>> ParseIndexList(const std::string& flag, const std::string& text,
                                                int count) {
  std::set<int> indices;
  if (text.empty()) {
    for (int i = 0; i < count; ++i) indices.insert(i);
  }
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> ends = absl::StrSplit(part, absl::MaxSplits('-', 1));
    int first, last;
    if (!absl::SimpleAtoi(ends[0], &first) ||
        !absl::SimpleAtoi(ends.size() == 2 ? ends[1] : ends[0], &last) || first > last ||
        first < 0 || last >= count) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": '", part, "' is not an index or range in 0..",
                                                     count - 1));
    }
    for (int i = first; i <= last; ++i) indices.insert(i);
  }
  return std::vector<int>(indices.begin(), indices.end());
}

}  // namespace toyllm
