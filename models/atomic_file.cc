#include "models/atomic_file.h"

#include <limits.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace toyllm {
namespace {

// The temporary file being written, for RemoveUnfinishedFile to find from a signal handler:
// a fixed buffer, because a handler may not touch the heap.
char unfinished_path[PATH_MAX];
std::atomic<bool> unfinished{false};

void MarkUnfinished(const std::string& temp) {
  if (temp.size() >= sizeof(unfinished_path)) return;  // fopen would refuse it anyway
  std::memcpy(unfinished_path, temp.c_str(), temp.size() + 1);
  unfinished.store(true);
}

}  // namespace

void RemoveUnfinishedFile() {
  if (unfinished.exchange(false)) unlink(unfinished_path);
}

absl::Status WriteFileAtomically(const std::string& path,
                                 const std::function<absl::Status(std::FILE*)>& write) {
  const std::string temp = absl::StrCat(path, ".tmp.", getpid());
  MarkUnfinished(temp);
  std::FILE* file = std::fopen(temp.c_str(), "wb");
  if (file == nullptr) {
    unfinished.store(false);
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot create (", strerror(errno), ")"));
  }
  absl::Status status = write(file);
  const bool flushed = std::fflush(file) == 0 && fsync(fileno(file)) == 0;
  const bool closed = std::fclose(file) == 0;
  if (status.ok() && !(flushed && closed)) {
    status = absl::DataLossError(absl::StrCat(path, ": write failed (", strerror(errno), ")"));
  }
  if (status.ok() && std::rename(temp.c_str(), path.c_str()) != 0) {
    status = absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot rename into place (", strerror(errno), ")"));
  }
  // Cleared only after the rename: a signal in between unlinks a name that is already gone.
  unfinished.store(false);
  if (!status.ok()) std::remove(temp.c_str());
  return status;
}

}  // namespace toyllm
