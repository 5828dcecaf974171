// The ZIP container of torch.save (PyTorch's default format since 1.6), read in place from
// a mapped file. torch.save stores every entry uncompressed, so an entry is a view of the
// file's bytes; compressed, encrypted, multi-disk and ZIP64 archives are rejected.
#ifndef TOYLLM_MODELS_ZIP_ARCHIVE_H_
#define TOYLLM_MODELS_ZIP_ARCHIVE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "models/mapped_file.h"

namespace toyllm {

inline constexpr uint32_t kZipMagic = 0x04034b50;  // "PK\3\4", a local file header

struct ZipEntry {
  const uint8_t* data = nullptr;
  uint64_t size = 0;
};

class ZipArchive {
 public:
  // Reads the central directory of `file`, which must outlive the result. Every entry is
  // checked to lie inside the file; errors name the file and the entry.
  static absl::StatusOr<ZipArchive> Parse(const MappedFile& file);

  // The entry called `name`, or nullptr.
  const ZipEntry* Find(const std::string& name) const;
  const std::map<std::string, ZipEntry, std::less<>>& entries() const { return entries_; }

 private:
  std::map<std::string, ZipEntry, std::less<>> entries_;
};

}  // namespace toyllm

#endif  // TOYLLM_MODELS_ZIP_ARCHIVE_H_
