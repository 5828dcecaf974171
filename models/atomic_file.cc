#include "models/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace toyllm {

absl::Status WriteFileAtomically(const std::string& path,
                                 const std::function<absl::Status(std::FILE*)>& write) {
  const std::string temp = absl::StrCat(path, ".tmp.", getpid());
  std::FILE* file = std::fopen(temp.c_str(), "wb");
  if (file == nullptr) {
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
  if (!status.ok()) std::remove(temp.c_str());
  return status;
}

}  // namespace toyllm
