#include "models/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace toyllm {

absl::StatusOr<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open (", strerror(errno), ")"));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  }
  if (st.st_size == 0) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": the file is empty"));
  }
  void* data = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int mmap_errno = errno;
  close(fd);  // the mapping stays valid without the descriptor
  if (data == MAP_FAILED) {
    return absl::InternalError(
        absl::StrCat(path, ": cannot map into memory (", strerror(mmap_errno), ")"));
  }
  return std::unique_ptr<MappedFile>(
      new MappedFile(path, static_cast<const uint8_t*>(data), st.st_size));
}

MappedFile::~MappedFile() { munmap(const_cast<uint8_t*>(data_), size_); }

}  // namespace toyllm
