#include "models/gguf_file.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace toyllm {
namespace {

constexpr uint32_t kMaxDims = 4;
constexpr size_t kMaxTensorName = 63;  // ggml keeps names in 64 bytes with a NUL
constexpr size_t kMaxKey = 65535;

// Fixed encoded size of a scalar type; 0 for strings and arrays.
size_t ScalarBytes(GgufValueType type) {
  switch (type) {
    case GgufValueType::kUint8: case GgufValueType::kInt8: case GgufValueType::kBool: return 1;
    case GgufValueType::kUint16: case GgufValueType::kInt16: return 2;
    case GgufValueType::kUint32: case GgufValueType::kInt32: case GgufValueType::kFloat32: return 4;
    case GgufValueType::kUint64: case GgufValueType::kInt64: case GgufValueType::kFloat64: return 8;
    case GgufValueType::kString: case GgufValueType::kArray: return 0;
  }
  return 0;
}

// Reads little-endian fields from the mapped bytes; every read is checked against the end.
class Cursor {
 public:
  Cursor(const MappedFile& file) : file_(file) {}

  size_t offset() const { return offset_; }
  size_t remaining() const { return file_.size() - offset_; }
  const uint8_t* here() const { return file_.data() + offset_; }

  absl::Status Skip(uint64_t n, const char* what) {
    if (n > remaining()) {
      return Error(absl::StrCat(what, " of ", n, " bytes runs past the end of the file"));
    }
    offset_ += n;
    return absl::OkStatus();
  }
  template <typename T>
  absl::Status Read(T* value, const char* what) {
    const uint8_t* start = here();
    if (absl::Status s = Skip(sizeof(T), what); !s.ok()) return s;
    std::memcpy(value, start, sizeof(T));
    return absl::OkStatus();
  }
  absl::Status ReadString(std::string* s, size_t max_length, const char* what) {
    uint64_t length;
    if (absl::Status st = Read(&length, what); !st.ok()) return st;
    if (length > max_length) {
      return Error(absl::StrCat(what, " is ", length, " bytes long, more than ", max_length));
    }
    const uint8_t* start = here();
    if (absl::Status st = Skip(length, what); !st.ok()) return st;
    s->assign(reinterpret_cast<const char*>(start), length);
    return absl::OkStatus();
  }
  absl::Status Error(const std::string& message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_.path(), ": bad GGUF at byte ", offset_, ": ", message));
  }

 private:
  const MappedFile& file_;
  size_t offset_ = 0;
};

// Checks that a value of `type` lies inside the file and moves past it.
absl::Status SkipValue(Cursor& cursor, GgufValueType type, bool in_array) {
  if (const size_t bytes = ScalarBytes(type); bytes > 0) return cursor.Skip(bytes, "a value");
  if (type == GgufValueType::kString) {
    uint64_t length;
    if (absl::Status s = cursor.Read(&length, "a string length"); !s.ok()) return s;
    return cursor.Skip(length, "a string");
  }
  if (type != GgufValueType::kArray || in_array) {
    return cursor.Error(in_array && type == GgufValueType::kArray
                            ? "nested arrays are not supported"
                            : absl::StrCat("unknown value type ", static_cast<uint32_t>(type)));
  }
  uint32_t element;
  uint64_t count;
  if (absl::Status s = cursor.Read(&element, "an array type"); !s.ok()) return s;
  if (absl::Status s = cursor.Read(&count, "an array length"); !s.ok()) return s;
  const auto element_type = static_cast<GgufValueType>(element);
  if (element > static_cast<uint32_t>(GgufValueType::kFloat64)) {
    return cursor.Error(absl::StrCat("unknown array element type ", element));
  }
  // Strings take at least their 8-byte length: a count the file cannot hold is corrupt,
  // and is caught here before any loop runs that long.
  const size_t min_bytes = element_type == GgufValueType::kString ? 8 : ScalarBytes(element_type);
  if (min_bytes == 0 || count > cursor.remaining() / min_bytes) {
    return min_bytes == 0 ? cursor.Error("nested arrays are not supported")
                          : cursor.Error(absl::StrCat("an array of ", count,
                                                      " elements cannot fit in the file"));
  }
  if (element_type != GgufValueType::kString) return cursor.Skip(count * min_bytes, "an array");
  for (uint64_t i = 0; i < count; ++i) {
    if (absl::Status s = SkipValue(cursor, element_type, true); !s.ok()) return s;
  }
  return absl::OkStatus();
}

template <typename T>
T Load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// An integer scalar of any width, as int64 (uint64 values above INT64_MAX fail).
bool LoadInt(GgufValueType type, const uint8_t* p, int64_t* out) {
  switch (type) {
    case GgufValueType::kUint8: *out = Load<uint8_t>(p); return true;
    case GgufValueType::kInt8: *out = Load<int8_t>(p); return true;
    case GgufValueType::kUint16: *out = Load<uint16_t>(p); return true;
    case GgufValueType::kInt16: *out = Load<int16_t>(p); return true;
    case GgufValueType::kUint32: *out = Load<uint32_t>(p); return true;
    case GgufValueType::kInt32: *out = Load<int32_t>(p); return true;
    case GgufValueType::kInt64: *out = Load<int64_t>(p); return true;
    case GgufValueType::kUint64: {
      const uint64_t u = Load<uint64_t>(p);
      *out = static_cast<int64_t>(u);
      return u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    }
    default: return false;
  }
}

std::string LoadString(const uint8_t* p) {
  return std::string(reinterpret_cast<const char*>(p + 8), Load<uint64_t>(p));
}

absl::Status ParseTensorInfo(Cursor& cursor, GgufTensor* tensor, uint64_t* offset) {
  if (absl::Status s = cursor.ReadString(&tensor->name, kMaxTensorName, "a tensor name"); !s.ok()) {
    return s;
  }
  uint32_t n_dims;
  if (absl::Status s = cursor.Read(&n_dims, "a tensor's dimension count"); !s.ok()) return s;
  if (n_dims < 1 || n_dims > kMaxDims) {
    return cursor.Error(absl::StrCat("tensor '", tensor->name, "' has ", n_dims, " dimensions"));
  }
  uint64_t elements = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    uint64_t dim;
    if (absl::Status s = cursor.Read(&dim, "a tensor dimension"); !s.ok()) return s;
    // 2^40 elements is far beyond any file this could be; it keeps the product from overflowing.
    if (dim == 0 || dim > (uint64_t{1} << 40) || elements > (uint64_t{1} << 40) / dim) {
      return cursor.Error(absl::StrCat("tensor '", tensor->name, "' has an absurd dimension ", dim));
    }
    elements *= dim;
    tensor->dims.push_back(static_cast<int64_t>(dim));
  }
  uint32_t type;
  if (absl::Status s = cursor.Read(&type, "a tensor type"); !s.ok()) return s;
  GgmlTypeTraits traits;
  if (!LookUpGgmlType(type, &traits)) {
    return cursor.Error(absl::StrCat("tensor '", tensor->name, "' has ggml type ", type, " (",
                                     UnsupportedGgmlType(type), "), which toyllm does not read (it reads ",
                                     kSupportedGgmlTypes, ")"));
  }
  tensor->type = static_cast<GgmlType>(type);
  if (tensor->dims[0] % traits.block_elements != 0) {
    return cursor.Error(absl::StrCat("tensor '", tensor->name, "' has rows of ", tensor->dims[0],
                                     " weights, not whole ", traits.name, " blocks"));
  }
  tensor->bytes = elements / traits.block_elements * traits.block_bytes;
  return cursor.Read(offset, "a tensor offset");
}

}  // namespace

absl::StatusOr<GgufFile> GgufFile::Parse(const MappedFile& file) {
  GgufFile gguf;
  gguf.path_ = file.path();
  Cursor cursor(file);
  uint32_t magic;
  if (absl::Status s = cursor.Read(&magic, "the magic"); !s.ok()) return s;
  if (magic != kGgufMagic) return cursor.Error("the file does not start with 'GGUF'");
  if (absl::Status s = cursor.Read(&gguf.version_, "the version"); !s.ok()) return s;
  if ((gguf.version_ & 0xFFFF) == 0) {
    return cursor.Error("the file is big-endian (or its version is corrupt); toyllm reads little-endian GGUF");
  }
  if (gguf.version_ != 2 && gguf.version_ != 3) {
    return cursor.Error(absl::StrCat("version ", gguf.version_, " is not supported (2 and 3 are)"));
  }
  uint64_t n_tensors, n_values;
  if (absl::Status s = cursor.Read(&n_tensors, "the tensor count"); !s.ok()) return s;
  if (absl::Status s = cursor.Read(&n_values, "the metadata count"); !s.ok()) return s;
  // A key/value takes at least 12 bytes and a tensor description at least 28.
  if (n_values > cursor.remaining() / 12 || n_tensors > cursor.remaining() / 28) {
    return cursor.Error(absl::StrCat(n_tensors, " tensors and ", n_values,
                                     " metadata entries cannot fit in the file"));
  }

  for (uint64_t i = 0; i < n_values; ++i) {
    std::string key;
    if (absl::Status s = cursor.ReadString(&key, kMaxKey, "a metadata key"); !s.ok()) return s;
    uint32_t type;
    if (absl::Status s = cursor.Read(&type, "a value type"); !s.ok()) return s;
    Value value{static_cast<GgufValueType>(type), GgufValueType::kUint8, 1, cursor.here()};
    if (absl::Status s = SkipValue(cursor, value.type, false); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(s.message(), " (key '", key, "')"));
    }
    if (value.type == GgufValueType::kArray) {
      value.element_type = static_cast<GgufValueType>(Load<uint32_t>(value.data));
      value.count = Load<uint64_t>(value.data + 4);
      value.data += 12;
    }
    if (!gguf.values_.emplace(key, value).second) {
      return cursor.Error(absl::StrCat("duplicate key '", key, "'"));
    }
  }
  if (gguf.Has("general.alignment")) {
    const Value& a = gguf.values_.at("general.alignment");
    const uint32_t alignment = a.type == GgufValueType::kUint32 ? Load<uint32_t>(a.data) : 0;
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
      return cursor.Error("general.alignment must be a uint32 power of two");
    }
    gguf.alignment_ = alignment;
  }

  // Grown as descriptions are parsed, so a corrupt count fails at the end of the file
  // instead of allocating for it.
  std::vector<uint64_t> offsets;
  std::set<std::string> names;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensor tensor;
    uint64_t offset;
    if (absl::Status s = ParseTensorInfo(cursor, &tensor, &offset); !s.ok()) return s;
    if (!names.insert(tensor.name).second) {
      return cursor.Error(absl::StrCat("duplicate tensor '", tensor.name, "'"));
    }
    gguf.tensors_.push_back(std::move(tensor));
    offsets.push_back(offset);
  }
  const uint64_t data_start =
      (cursor.offset() + gguf.alignment_ - 1) / gguf.alignment_ * gguf.alignment_;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensor& t = gguf.tensors_[i];
    if (offsets[i] % gguf.alignment_ != 0) {
      return cursor.Error(absl::StrCat("tensor '", t.name, "' is at offset ", offsets[i],
                                       ", not a multiple of the alignment ", gguf.alignment_));
    }
    if (data_start > file.size() || offsets[i] > file.size() - data_start ||
        t.bytes > file.size() - data_start - offsets[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          file.path(), ": tensor '", t.name, "' (", t.bytes, " bytes at data offset ", offsets[i],
          ") runs past the end of the file (", file.size(), " bytes; truncated?)"));
    }
    t.data = file.data() + data_start + offsets[i];
  }
  // Writers lay tensors out one after another (llama.cpp's reader insists on it). Tensors
  // sharing bytes would let a small file describe a model many times its size, which
  // converting to float32 would then allocate, copy by copy.
  std::vector<uint64_t> order(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint64_t a, uint64_t b) { return offsets[a] < offsets[b]; });
  for (uint64_t i = 1; i < n_tensors; ++i) {
    const GgufTensor& before = gguf.tensors_[order[i - 1]];
    const GgufTensor& t = gguf.tensors_[order[i]];
    if (offsets[order[i]] - offsets[order[i - 1]] < before.bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          file.path(), ": bad GGUF: tensor '", t.name, "' at data offset ", offsets[order[i]],
          " overlaps tensor '", before.name, "' (", before.bytes, " bytes at data offset ",
          offsets[order[i - 1]], ")"));
    }
  }
  return gguf;
}

std::vector<std::string> GgufFile::Keys() const {
  std::vector<std::string> keys;
  for (const auto& [key, value] : values_) keys.push_back(key);
  return keys;
}

const GgufTensor* GgufFile::FindTensor(const std::string& name) const {
  for (const GgufTensor& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

absl::StatusOr<GgufFile::Value> GgufFile::Find(const std::string& key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) {
    return absl::NotFoundError(absl::StrCat(path_, ": metadata key '", key, "' is missing"));
  }
  return it->second;
}

absl::Status GgufFile::WrongType(const std::string& key, const char* wanted) const {
  return absl::InvalidArgumentError(
      absl::StrCat(path_, ": metadata key '", key, "' is not ", wanted));
}

absl::StatusOr<int64_t> GgufFile::GetInt(const std::string& key) const {
  absl::StatusOr<Value> v = Find(key);
  if (!v.ok()) return v.status();
  int64_t out;
  if (!LoadInt(v->type, v->data, &out)) return WrongType(key, "an integer");
  return out;
}

absl::StatusOr<bool> GgufFile::GetBool(const std::string& key) const {
  absl::StatusOr<Value> v = Find(key);
  if (!v.ok()) return v.status();
  if (v->type != GgufValueType::kBool) return WrongType(key, "a bool");
  return Load<uint8_t>(v->data) != 0;
}

absl::StatusOr<double> GgufFile::GetFloat(const std::string& key) const {
  absl::StatusOr<Value> v = Find(key);
  if (!v.ok()) return v.status();
  if (v->type == GgufValueType::kFloat32) return Load<float>(v->data);
  if (v->type == GgufValueType::kFloat64) return Load<double>(v->data);
  return WrongType(key, "a float");
}

absl::StatusOr<std::string> GgufFile::GetString(const std::string& key) const {
  absl::StatusOr<Value> v = Find(key);
  if (!v.ok()) return v.status();
  if (v->type != GgufValueType::kString) return WrongType(key, "a string");
  return LoadString(v->data);
}

absl::StatusOr<std::vector<std::string>> GgufFile::GetStringArray(const std::string& key) const {
  absl::StatusOr<Value> v = Find(key);
  if (!v.ok()) return v.status();
  if (v->type != GgufValueType::kArray || v->element_type != GgufValueType::kString) {
    return WrongType(key, "an array of strings");
  }
  std::vector<std::string> out;
  out.reserve(v->count);
  const uint8_t* p = v->data;
  for (uint64_t i = 0; i < v->count; ++i) {
    out.push_back(LoadString(p));
    p += 8 + out.back().size();
  }
  return out;
}

absl::StatusOr<std::vector<float>> GgufFile::GetFloatArray(const std::string& key) const {
  absl::StatusOr<Value> v = Find(key);
  if (!v.ok()) return v.status();
  if (v->type != GgufValueType::kArray || v->element_type != GgufValueType::kFloat32) {
    return WrongType(key, "an array of float32");
  }
  std::vector<float> out(v->count);
  // An empty vector's data() may be null, which memcpy may not be given even for 0 bytes.
  if (!out.empty()) std::memcpy(out.data(), v->data, out.size() * sizeof(float));
  return out;
}

absl::StatusOr<std::vector<int32_t>> GgufFile::GetIntArray(const std::string& key) const {
  absl::StatusOr<Value> v = Find(key);
  if (!v.ok()) return v.status();
  const size_t bytes = ScalarBytes(v->element_type);
  if (v->type != GgufValueType::kArray || bytes == 0 || bytes > 4 ||
      v->element_type == GgufValueType::kFloat32 || v->element_type == GgufValueType::kBool) {
    return WrongType(key, "an array of 32-bit or narrower integers");
  }
  std::vector<int32_t> out(v->count);
  for (uint64_t i = 0; i < v->count; ++i) {
    int64_t value = 0;
    LoadInt(v->element_type, v->data + i * bytes, &value);
    out[i] = static_cast<int32_t>(value);
  }
  return out;
}

absl::StatusOr<std::string> GgufFile::GetByteArray(const std::string& key) const {
  absl::StatusOr<Value> v = Find(key);
  if (!v.ok()) return v.status();
  if (v->type != GgufValueType::kArray || ScalarBytes(v->element_type) != 1 ||
      v->element_type == GgufValueType::kBool) {
    return WrongType(key, "an array of bytes");
  }
  return std::string(reinterpret_cast<const char*>(v->data), v->count);
}

std::string GgufFile::Describe(const std::string& key) const {
  const absl::StatusOr<Value> v = Find(key);
  if (!v.ok()) return "?";
  int64_t i;
  switch (v->type) {
    case GgufValueType::kString: return absl::StrCat("\"", LoadString(v->data).substr(0, 60), "\"");
    case GgufValueType::kFloat32: return absl::StrCat(Load<float>(v->data));
    case GgufValueType::kFloat64: return absl::StrCat(Load<double>(v->data));
    case GgufValueType::kBool: return Load<uint8_t>(v->data) ? "true" : "false";
    case GgufValueType::kArray: return absl::StrCat("array of ", v->count);
    default: return LoadInt(v->type, v->data, &i) ? absl::StrCat(i) : "?";
  }
}

}  // namespace toyllm
