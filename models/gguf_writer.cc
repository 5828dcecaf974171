#include "models/gguf_writer.h"

#include "absl/strings/str_cat.h"
#include "models/atomic_file.h"
#include "models/gguf_file.h"

namespace toyllm {
namespace {

template <typename T>
void Put(const T& value, std::string* out) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(T));
}

void PutString(const std::string& s, std::string* out) {
  Put<uint64_t>(s.size(), out);
  out->append(s);
}

void PutArrayHeader(GgufValueType element, uint64_t count, std::string* out) {
  Put(static_cast<uint32_t>(element), out);
  Put(count, out);
}

uint64_t PaddingTo(uint64_t offset) {
  return (kGgufDefaultAlignment - offset % kGgufDefaultAlignment) % kGgufDefaultAlignment;
}

}  // namespace

void GgufWriter::Key(const std::string& key, uint32_t type) {
  PutString(key, &metadata_);
  Put(type, &metadata_);
  ++n_values_;
}

void GgufWriter::AddString(const std::string& key, const std::string& value) {
  Key(key, static_cast<uint32_t>(GgufValueType::kString));
  PutString(value, &metadata_);
}

void GgufWriter::AddUint32(const std::string& key, uint32_t value) {
  Key(key, static_cast<uint32_t>(GgufValueType::kUint32));
  Put(value, &metadata_);
}

void GgufWriter::AddFloat32(const std::string& key, float value) {
  Key(key, static_cast<uint32_t>(GgufValueType::kFloat32));
  Put(value, &metadata_);
}

void GgufWriter::AddBool(const std::string& key, bool value) {
  Key(key, static_cast<uint32_t>(GgufValueType::kBool));
  Put<uint8_t>(value ? 1 : 0, &metadata_);
}

void GgufWriter::AddStringArray(const std::string& key, const std::vector<std::string>& values) {
  Key(key, static_cast<uint32_t>(GgufValueType::kArray));
  PutArrayHeader(GgufValueType::kString, values.size(), &metadata_);
  for (const std::string& v : values) PutString(v, &metadata_);
}

void GgufWriter::AddFloat32Array(const std::string& key, const std::vector<float>& values) {
  Key(key, static_cast<uint32_t>(GgufValueType::kArray));
  PutArrayHeader(GgufValueType::kFloat32, values.size(), &metadata_);
  for (float v : values) Put(v, &metadata_);
}

void GgufWriter::AddInt32Array(const std::string& key, const std::vector<int32_t>& values) {
  Key(key, static_cast<uint32_t>(GgufValueType::kArray));
  PutArrayHeader(GgufValueType::kInt32, values.size(), &metadata_);
  for (int32_t v : values) Put(v, &metadata_);
}

void GgufWriter::AddUint8Array(const std::string& key, const std::string& bytes) {
  Key(key, static_cast<uint32_t>(GgufValueType::kArray));
  PutArrayHeader(GgufValueType::kUint8, bytes.size(), &metadata_);
  metadata_.append(bytes);
}

void GgufWriter::AddTensor(const std::string& name, std::vector<int64_t> dims, GgmlType type,
                           Encoder encode) {
  GgmlTypeTraits traits;
  LookUpGgmlType(static_cast<uint32_t>(type), &traits);
  uint64_t elements = 1;
  for (int64_t d : dims) elements *= d;
  const uint64_t bytes = elements / traits.block_elements * traits.block_bytes;
  tensors_.push_back({name, std::move(dims), type, bytes, std::move(encode)});
}

absl::Status GgufWriter::Write(const std::string& path, const Progress& progress) const {
  std::string header;
  Put(kGgufMagic, &header);
  Put<uint32_t>(3, &header);
  Put<uint64_t>(tensors_.size(), &header);
  Put<uint64_t>(n_values_, &header);
  header.append(metadata_);
  uint64_t offset = 0;  // of each tensor, from the start of the data section
  for (const Tensor& t : tensors_) {
    PutString(t.name, &header);
    Put<uint32_t>(t.dims.size(), &header);
    for (int64_t d : t.dims) Put<uint64_t>(d, &header);
    Put(static_cast<uint32_t>(t.type), &header);
    Put(offset, &header);
    offset += t.bytes + PaddingTo(t.bytes);
  }
  header.append(PaddingTo(header.size()), '\0');

  return WriteFileAtomically(path, [&](std::FILE* file) {
    if (std::fwrite(header.data(), 1, header.size(), file) != header.size()) {
      return absl::DataLossError(absl::StrCat(path, ": write failed"));
    }
    std::string data;
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const Tensor& t = tensors_[i];
      data.clear();
      t.encode(&data);
      if (data.size() != t.bytes) {
        return absl::InternalError(absl::StrCat(path, ": tensor '", t.name, "' encoded to ",
                                                data.size(), " bytes, expected ", t.bytes));
      }
      data.append(PaddingTo(data.size()), '\0');
      if (std::fwrite(data.data(), 1, data.size(), file) != data.size()) {
        return absl::DataLossError(absl::StrCat(path, ": write failed"));
      }
      if (progress) progress(i + 1, tensors_.size());
    }
    return absl::OkStatus();
  });
}

}  // namespace toyllm
