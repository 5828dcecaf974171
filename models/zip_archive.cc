#include "models/zip_archive.h"

#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace toyllm {
namespace {

constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr size_t kLocalHeaderBytes = 30;
constexpr size_t kCentralHeaderBytes = 46;
constexpr size_t kEndBytes = 22;
constexpr size_t kMaxCommentBytes = 0xffff;
constexpr uint16_t kStored = 0;
constexpr uint16_t kEncryptedFlag = 1;

uint16_t U16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
uint32_t U32(const uint8_t* p) { return U16(p) | static_cast<uint32_t>(U16(p + 2)) << 16; }

// A name from the file, quoted with control and non-ASCII bytes escaped for the terminal.
std::string Quoted(const std::string& name) {
  return absl::StrCat("'", absl::CHexEscape(name), "'");
}

absl::Status Error(const MappedFile& file, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(file.path(), ": ", what));
}

absl::Status Zip64Error(const MappedFile& file) {
  return absl::UnimplementedError(absl::StrCat(
      file.path(), ": a ZIP64 archive (over 4 GiB or 65535 entries) is not supported"));
}

// The end-of-central-directory record closes the archive, followed only by its comment;
// searching backwards for a signature whose comment ends exactly at the end of the file
// avoids mistaking stored data for it.
absl::StatusOr<size_t> FindEndRecord(const MappedFile& file) {
  if (file.size() < kEndBytes) {
    return Error(file,
                 absl::StrCat(file.size(), " bytes is too short for a ZIP archive (truncated?)"));
  }
  const size_t last = file.size() - kEndBytes;
  const size_t first = last > kMaxCommentBytes ? last - kMaxCommentBytes : 0;
  for (size_t pos = last + 1; pos-- > first;) {
    const uint8_t* p = file.data() + pos;
    if (U32(p) == kEndSignature && pos + kEndBytes + U16(p + 20) == file.size()) return pos;
  }
  return Error(file, "no ZIP end-of-central-directory record (truncated?)");
}

// Where the bytes of the entry whose local header is at `offset` start. torch.save sets
// the data-descriptor flag and leaves the local sizes zero, so the central directory's
// size is the one used; the local header only adds its own name and padding lengths.
absl::StatusOr<ZipEntry> LocateData(const MappedFile& file, const std::string& name,
                                    uint64_t offset, uint64_t size, uint64_t directory_start) {
  if (offset > directory_start || directory_start - offset < kLocalHeaderBytes) {
    return Error(file,
                 absl::StrCat("entry ", Quoted(name), ": its local header lies outside the data"));
  }
  const uint8_t* p = file.data() + offset;
  if (U32(p) != kZipMagic) {
    return Error(file,
                 absl::StrCat("entry ", Quoted(name), ": no local header at offset ", offset));
  }
  const uint16_t name_bytes = U16(p + 26);
  const uint64_t start = offset + kLocalHeaderBytes + name_bytes + U16(p + 28);
  if (start > directory_start || directory_start - start < size) {
    return Error(file, absl::StrCat("entry ", Quoted(name), ": its ", size,
                                    " bytes run past the end of the data (truncated?)"));
  }
  if (name_bytes != name.size() ||
      std::memcmp(p + kLocalHeaderBytes, name.data(), name_bytes) != 0) {
    return Error(file,
                 absl::StrCat("entry ", Quoted(name), ": the local header names another file"));
  }
  return ZipEntry{file.data() + start, size};
}

}  // namespace

absl::StatusOr<ZipArchive> ZipArchive::Parse(const MappedFile& file) {
  absl::StatusOr<size_t> end_pos = FindEndRecord(file);
  if (!end_pos.ok()) return end_pos.status();
  const uint8_t* end = file.data() + *end_pos;
  if (U16(end + 4) != 0 || U16(end + 6) != 0 || U16(end + 8) != U16(end + 10)) {
    return absl::UnimplementedError(
        absl::StrCat(file.path(), ": a multi-disk ZIP archive is not supported"));
  }
  const uint16_t count = U16(end + 10);
  const uint32_t directory_bytes = U32(end + 12), directory_start = U32(end + 16);
  // ZIP64 archives saturate these fields and keep the real values in extra records.
  if (count == 0xffff || directory_bytes == 0xffffffff || directory_start == 0xffffffff) {
    return Zip64Error(file);
  }
  if (directory_start > *end_pos || *end_pos - directory_start < directory_bytes) {
    return Error(file, "the ZIP central directory lies outside the file (truncated?)");
  }
  if (count > directory_bytes / kCentralHeaderBytes) {
    return Error(file, absl::StrCat("the ZIP central directory of ", directory_bytes,
                                    " bytes cannot hold ", count, " entries"));
  }
  ZipArchive archive;
  const uint64_t directory_end = uint64_t{directory_start} + directory_bytes;
  uint64_t pos = directory_start;
  for (int i = 0; i < count; ++i) {
    const uint8_t* p = file.data() + pos;
    if (directory_end - pos < kCentralHeaderBytes || U32(p) != kCentralHeaderSignature) {
      return Error(file, absl::StrCat("ZIP central directory entry ", i, " is malformed"));
    }
    const uint16_t name_bytes = U16(p + 28);
    const uint64_t record_bytes = kCentralHeaderBytes + name_bytes + U16(p + 30) + U16(p + 32);
    if (directory_end - pos < record_bytes) {
      return Error(file,
                   absl::StrCat("ZIP central directory entry ", i, " runs past the directory"));
    }
    std::string name(reinterpret_cast<const char*>(p + kCentralHeaderBytes), name_bytes);
    const uint16_t flags = U16(p + 8), method = U16(p + 10);
    const uint32_t packed = U32(p + 20), size = U32(p + 24), offset = U32(p + 42);
    if (flags & kEncryptedFlag) {
      return Error(file, absl::StrCat("entry ", Quoted(name), " is encrypted"));
    }
    if (method != kStored) {
      return absl::UnimplementedError(
          absl::StrCat(file.path(), ": entry ", Quoted(name), " is compressed (method ", method,
                       "); only stored entries, as torch.save writes them, can be read in place"));
    }
    if (packed == 0xffffffff || size == 0xffffffff || offset == 0xffffffff) return Zip64Error(file);
    if (packed != size) {
      return Error(file,
                   absl::StrCat("entry ", Quoted(name), " is stored but its two sizes differ"));
    }
    absl::StatusOr<ZipEntry> entry = LocateData(file, name, offset, size, directory_start);
    if (!entry.ok()) return entry.status();
    if (!archive.entries_.emplace(name, *entry).second) {
      return Error(file, absl::StrCat("entry ", Quoted(name), " appears twice"));
    }
    pos += record_bytes;
  }
  return archive;
}

const ZipEntry* ZipArchive::Find(const std::string& name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace toyllm
