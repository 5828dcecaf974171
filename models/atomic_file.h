// Writing an output file so that it is either complete or absent: the bytes go to a
// temporary file beside it, which is renamed over the target only once fully written.
#ifndef TOYLLM_MODELS_ATOMIC_FILE_H_
#define TOYLLM_MODELS_ATOMIC_FILE_H_

#include <cstdio>
#include <functional>
#include <string>

#include "absl/status/status.h"

namespace toyllm {

// Calls write(file) on a temporary file and renames it to `path` when write succeeds and
// every byte reached the disk; otherwise removes the temporary file. Errors name `path`.
absl::Status WriteFileAtomically(const std::string& path,
                                 const std::function<absl::Status(std::FILE*)>& write);

// Removes the temporary file that WriteFileAtomically is writing, if any. Async-signal-safe:
// the command line calls it from its SIGINT handler so that an interrupted run leaves no
// partial file behind.
void RemoveUnfinishedFile();

}  // namespace toyllm

#endif  // TOYLLM_MODELS_ATOMIC_FILE_H_
