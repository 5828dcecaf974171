// Text files (JSON, HTML) written whole, atomically.
#ifndef TOYLLM_TOOLS_INSPECT_TEXT_FILE_H_
#define TOYLLM_TOOLS_INSPECT_TEXT_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace toyllm {

absl::Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_INSPECT_TEXT_FILE_H_
