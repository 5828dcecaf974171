#include "models/safetensors_file.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace toyllm {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the reference parser's limit

// Bytes per element of the dtypes a weight can have; 0 for others.
int DtypeBytes(const std::string& dtype) {
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL") return 1;
  return 0;
}

}  // namespace

absl::StatusOr<SafetensorsFile> SafetensorsFile::Parse(const MappedFile& file) {
  const auto bad = [&file](const std::string& message) {
    return absl::InvalidArgumentError(absl::StrCat(file.path(), ": bad safetensors: ", message));
  };
  uint64_t header_bytes;
  if (file.size() < sizeof(header_bytes)) return bad("shorter than its 8-byte header length");
  std::memcpy(&header_bytes, file.data(), sizeof(header_bytes));
  if (header_bytes > kMaxHeaderBytes || header_bytes > file.size() - sizeof(header_bytes)) {
    return bad(absl::StrCat("a header of ", header_bytes, " bytes does not fit the file"));
  }
  const char* text = reinterpret_cast<const char*>(file.data() + sizeof(header_bytes));
  const nlohmann::json header =
      nlohmann::json::parse(text, text + header_bytes, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (!header.is_object()) return bad("the header is not a JSON object");
  const uint8_t* buffer = file.data() + sizeof(header_bytes) + header_bytes;
  const uint64_t buffer_bytes = file.size() - sizeof(header_bytes) - header_bytes;

  SafetensorsFile result;
  for (const auto& item : header.items()) {
    // Not a structured binding: C++17 lambdas (and clang before 16) cannot capture one.
    const std::string& name = item.key();
    const nlohmann::json& entry = item.value();
    if (name == "__metadata__") continue;
    const auto where = [&name](const std::string& what) { return absl::StrCat("tensor '", name, "' ", what); };
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() ||
        !entry.contains("shape") || !entry["shape"].is_array() ||
        !entry.contains("data_offsets") || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2) {
      return bad(where("needs dtype, shape and two data_offsets"));
    }
    SafetensorsTensor t;
    t.dtype = entry["dtype"].get<std::string>();
    const int element_bytes = DtypeBytes(t.dtype);
    if (element_bytes == 0) return bad(where(absl::StrCat("has unsupported dtype ", t.dtype)));
    uint64_t elements = 1;
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (uint64_t{1} << 40) ||
          (d.get<uint64_t>() > 0 && elements > (uint64_t{1} << 40) / d.get<uint64_t>())) {
        return bad(where("has an invalid or absurd shape"));
      }
      elements *= d.get<uint64_t>();
      t.shape.push_back(d.get<int64_t>());
    }
    const auto& offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
      return bad(where("has non-numeric data_offsets"));
    }
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end) {
      return bad(where(absl::StrCat("has data_offsets [", begin, ", ", end, "] that end before they begin")));
    }
    if (end > buffer_bytes) {
      return bad(where(absl::StrCat("has data_offsets [", begin, ", ", end, "] outside the ",
                                    buffer_bytes, "-byte buffer (truncated?)")));
    }
    if (end - begin != elements * element_bytes) {
      return bad(where(absl::StrCat("has ", end - begin, " bytes for ", elements, " ", t.dtype,
                                    " elements")));
    }
    t.data = buffer + begin;
    t.bytes = end - begin;
    result.tensors_.emplace(name, std::move(t));
  }
  // The reference parser requires the tensors to tile the buffer. Tensors sharing bytes
  // would let a small file describe a model many times its size, which converting to
  // float32 would then allocate, copy by copy.
  std::vector<std::pair<const uint8_t*, const std::string*>> starts;
  for (const auto& [name, t] : result.tensors_) {
    if (t.bytes > 0) starts.emplace_back(t.data, &name);
  }
  std::sort(starts.begin(), starts.end());
  for (size_t i = 1; i < starts.size(); ++i) {
    const SafetensorsTensor& before = result.tensors_.at(*starts[i - 1].second);
    if (starts[i].first < before.data + before.bytes) {
      return bad(absl::StrCat("tensor '", *starts[i].second, "' overlaps tensor '",
                              *starts[i - 1].second, "' in the buffer"));
    }
  }
  return result;
}

}  // namespace toyllm
