#include "tools/inspect/text_file.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "models/atomic_file.h"

namespace toyllm {

absl::Status WriteTextFile(const std::string& path, const std::string& text) {
  return WriteFileAtomically(path, [&](std::FILE* file) {
    if (std::fwrite(text.data(), 1, text.size(), file) != text.size()) {
      return absl::DataLossError(absl::StrCat(path, ": write failed"));
    }
    return absl::OkStatus();
  });
}

}  // namespace toyllm
