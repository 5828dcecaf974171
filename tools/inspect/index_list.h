// Parsing selections such as --layers 0,2-4 into indices.
#ifndef TOYLLM_TOOLS_INSPECT_INDEX_LIST_H_
#define TOYLLM_TOOLS_INSPECT_INDEX_LIST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace toyllm {

// "" selects all of 0..count-1; otherwise comma-separated indices and ranges a-b, each
// inside 0..count-1. Errors name `flag`.
absl::StatusOr<std::vector<int>> ParseIndexList(const std::string& flag, const std::string& text,
                                                int count);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_INSPECT_INDEX_LIST_H_
