// Writes GGUF v3 files: metadata first, then tensors, each encoded only when its turn comes
// so that a large model never sits in memory twice. The file appears atomically.
#ifndef TOYLLM_MODELS_GGUF_WRITER_H_
#define TOYLLM_MODELS_GGUF_WRITER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "models/ggml_type.h"

namespace toyllm {

class GgufWriter {
 public:
  // Appends the encoded bytes of one tensor to *out.
  using Encoder = std::function<void(std::string* out)>;
  // Called after each tensor is written: (tensors done, tensors in all).
  using Progress = std::function<void(size_t, size_t)>;

  void AddString(const std::string& key, const std::string& value);
  void AddUint32(const std::string& key, uint32_t value);
  void AddFloat32(const std::string& key, float value);
  void AddBool(const std::string& key, bool value);
  void AddStringArray(const std::string& key, const std::vector<std::string>& values);
  void AddFloat32Array(const std::string& key, const std::vector<float>& values);
  void AddInt32Array(const std::string& key, const std::vector<int32_t>& values);
  void AddUint8Array(const std::string& key, const std::string& bytes);

  // dims in ggml order (contiguous axis first); `encode` must produce exactly the bytes
  // that dims and type imply.
  void AddTensor(const std::string& name, std::vector<int64_t> dims, GgmlType type,
                 Encoder encode);

  absl::Status Write(const std::string& path, const Progress& progress = nullptr) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> dims;
    GgmlType type;
    uint64_t bytes;
    Encoder encode;
  };

  void Key(const std::string& key, uint32_t type);

  std::string metadata_;  // encoded key/value pairs
  uint64_t n_values_ = 0;
  std::vector<Tensor> tensors_;
};

}  // namespace toyllm

#endif  // TOYLLM_MODELS_GGUF_WRITER_H_
