// A read-only memory mapping of a whole file: weights are read in place, never copied.
// Or, as llama.cpp's --no-mmap, the file read into anonymous memory: no page of it is then
// read from disk while a token is computed, at the price of reading it all up front and
// keeping a copy the kernel cannot drop and re-read. --mlock locks either kind in RAM.
#ifndef TOYLLM_MODELS_MAPPED_FILE_H_
#define TOYLLM_MODELS_MAPPED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace toyllm {

struct FileMemory {
  bool map = true;     // false: read into anonymous memory (--no-mmap)
  bool lock = false;   // lock the pages in RAM (--mlock): never paged out, never re-read
};

class MappedFile {
 public:
  // Fails with an error naming the file when it is missing, not a regular file, or empty,
  // or when it cannot be read or locked as `memory` asks.
  static absl::StatusOr<std::unique_ptr<MappedFile>> Open(const std::string& path,
                                                           FileMemory memory = {});
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const uint8_t* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  const uint8_t* data_;
  size_t size_;
};

}  // namespace toyllm

#endif  // TOYLLM_MODELS_MAPPED_FILE_H_
