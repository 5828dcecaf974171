// GGUF, the llama.cpp ecosystem's model file (ggml docs/gguf.md): a header, typed
// metadata key/values, tensor descriptions, then the aligned tensor data. GgufFile checks
// the whole structure against the file's length once, at Parse, before anything trusts it;
// the accessors then decode values in place.
#ifndef TOYLLM_MODELS_GGUF_FILE_H_
#define TOYLLM_MODELS_GGUF_FILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/ggml_type.h"
#include "models/mapped_file.h"

namespace toyllm {

enum class GgufValueType : uint32_t {
  kUint8 = 0, kInt8 = 1, kUint16 = 2, kInt16 = 3, kUint32 = 4, kInt32 = 5, kFloat32 = 6,
  kBool = 7, kString = 8, kArray = 9, kUint64 = 10, kInt64 = 11, kFloat64 = 12,
};

inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" read as little-endian uint32
inline constexpr uint32_t kGgufDefaultAlignment = 32;

struct GgufTensor {
  std::string name;
  std::vector<int64_t> dims;  // ggml order: dims[0] is the contiguous axis
  GgmlType type;
  const uint8_t* data = nullptr;  // inside the mapping
  uint64_t bytes = 0;
};

class GgufFile {
 public:
  // Parses and checks the structure of a mapped file; `file` must outlive the result.
  static absl::StatusOr<GgufFile> Parse(const MappedFile& file);

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  const std::string& path() const { return path_; }

  bool Has(const std::string& key) const { return values_.count(key) > 0; }
  std::vector<std::string> Keys() const;
  // Every integer type converts when the value fits; errors name the file and the key.
  absl::StatusOr<int64_t> GetInt(const std::string& key) const;
  absl::StatusOr<bool> GetBool(const std::string& key) const;
  absl::StatusOr<double> GetFloat(const std::string& key) const;  // float32 or float64
  absl::StatusOr<std::string> GetString(const std::string& key) const;
  absl::StatusOr<std::vector<std::string>> GetStringArray(const std::string& key) const;
  absl::StatusOr<std::vector<float>> GetFloatArray(const std::string& key) const;
  absl::StatusOr<std::vector<int32_t>> GetIntArray(const std::string& key) const;
  absl::StatusOr<std::string> GetByteArray(const std::string& key) const;  // uint8 or int8
  // A short human-readable rendering of a value, for `toyllm info`.
  std::string Describe(const std::string& key) const;

  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* FindTensor(const std::string& name) const;

 private:
  // Where a value's encoding starts; Parse has checked that it lies inside the file.
  struct Value {
    GgufValueType type;
    GgufValueType element_type;  // for arrays
    uint64_t count = 1;          // for arrays
    const uint8_t* data;
  };

  absl::StatusOr<Value> Find(const std::string& key) const;
  absl::Status WrongType(const std::string& key, const char* wanted) const;

  std::string path_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kGgufDefaultAlignment;
  std::map<std::string, Value> values_;
  std::vector<GgufTensor> tensors_;
};

}  // namespace toyllm

#endif  // TOYLLM_MODELS_GGUF_FILE_H_
