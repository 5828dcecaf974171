#include "models/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

// Under AddressSanitizer the bytes between the file's end and the end of its last page
// are poisoned: a reader that runs past the end of a file would otherwise read the
// mapping's zero padding unnoticed, and only a read beyond the page would fault.
#if defined(__SANITIZE_ADDRESS__)
#define TOYLLM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TOYLLM_ASAN 1
#endif
#endif
#ifdef TOYLLM_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace toyllm {

#ifdef TOYLLM_ASAN
namespace {

// The mapping's length: whole pages.
size_t PageEnd(size_t size) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGE_SIZE));
  return (size + page - 1) / page * page;
}

}  // namespace
#endif

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
#ifdef TOYLLM_ASAN
  ASAN_POISON_MEMORY_REGION(static_cast<uint8_t*>(data) + st.st_size,
                            PageEnd(st.st_size) - st.st_size);
#endif
  return std::unique_ptr<MappedFile>(
      new MappedFile(path, static_cast<const uint8_t*>(data), st.st_size));
}

MappedFile::~MappedFile() {
#ifdef TOYLLM_ASAN
  // The addresses will be reused by later allocations and mappings.
  ASAN_UNPOISON_MEMORY_REGION(const_cast<uint8_t*>(data_), PageEnd(size_));
#endif
  munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace toyllm
