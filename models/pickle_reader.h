// A restricted unpickler for the data.pkl of a torch.save archive. It rebuilds the plain
// values a checkpoint holds (dicts, lists, tuples, strings, numbers, None, booleans) and
// tensors as references to the archive's storages, and nothing else: it never imports or
// calls anything. GLOBAL may only name torch's tensor rebuilder, OrderedDict and three
// storage types, which REDUCE and BINPERSID interpret by name; any other name or opcode is
// an error. Every operand is checked against the remaining bytes before it is read.
#ifndef TOYLLM_MODELS_PICKLE_READER_H_
#define TOYLLM_MODELS_PICKLE_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "models/ggml_type.h"

namespace toyllm {

enum class PickleKind {
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kTuple,
  kList,
  kDict,
  kGlobal,
  kStorage,
  kTensor
};

// A storage as torch.save's persistent id names it: the archive entry "<prefix>/data/<key>"
// holding `numel` elements of `dtype`.
struct TorchStorage {
  GgmlType dtype = GgmlType::kF32;  // kF32, kF16 or kBF16
  std::string key;
  int64_t numel = 0;
};

// torch._utils._rebuild_tensor_v2's arguments: a strided view of a storage, in elements.
struct TorchTensor {
  TorchStorage storage;
  int64_t offset = 0;
  std::vector<int64_t> shape;   // outermost first
  std::vector<int64_t> stride;  // one per dimension
};

struct PickleObject {
  PickleKind kind = PickleKind::kNone;
  int64_t integer = 0;     // kInt; kBool: 0 or 1; kStorage, kTensor: index in the Pickle
  double number = 0.0;     // kFloat
  std::string text;        // kString; kGlobal: "module.name"
  std::vector<int> items;  // kTuple, kList: elements; kDict: key, value, key, value, ...
};

class Pickle {
 public:
  // Errors give the byte offset of the offending opcode; the caller adds the file's name.
  static absl::StatusOr<Pickle> Parse(absl::Span<const uint8_t> bytes);

  const PickleObject& root() const { return objects_[root_]; }
  const PickleObject& at(int id) const { return objects_[id]; }
  const TorchTensor& tensor(const PickleObject& o) const { return tensors_[o.integer]; }

  // The value under the string `key` of a dict (the last one, as Python keeps), or nullptr.
  const PickleObject* Find(const PickleObject& dict, std::string_view key) const;

 private:
  friend class Unpickler;
  std::vector<PickleObject> objects_;
  std::vector<TorchStorage> storages_;
  std::vector<TorchTensor> tensors_;
  int root_ = 0;
};

}  // namespace toyllm

#endif  // TOYLLM_MODELS_PICKLE_READER_H_
