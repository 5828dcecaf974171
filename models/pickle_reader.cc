#include "models/pickle_reader.h"

#include <climits>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace toyllm {
namespace {

// The opcodes torch.save's protocol-2 pickles use (Python's Lib/pickle.py names).
enum Opcode : uint8_t {
  kMark = '(',
  kStop = '.',
  kBinFloat = 'G',
  kBinInt = 'J',
  kBinInt1 = 'K',
  kBinInt2 = 'M',
  kNone = 'N',
  kBinPersId = 'Q',
  kReduce = 'R',
  kBinString = 'T',
  kShortBinString = 'U',
  kBinUnicode = 'X',
  kAppend = 'a',
  kBuild = 'b',
  kGlobal = 'c',
  kAppends = 'e',
  kBinGet = 'h',
  kLongBinGet = 'j',
  kEmptyList = ']',
  kBinPut = 'q',
  kLongBinPut = 'r',
  kSetItem = 's',
  kTuple = 't',
  kSetItems = 'u',
  kEmptyDict = '}',
  kEmptyTuple = ')',
  kProto = 0x80,
  kTuple1 = 0x85,
  kTuple2 = 0x86,
  kTuple3 = 0x87,
  kNewTrue = 0x88,
  kNewFalse = 0x89,
  kLong1 = 0x8a,
  kShortBinUnicode = 0x8c,
  kMemoize = 0x94,
};

constexpr int kHighestProtocol = 5;
// A checkpoint nests a few levels (checkpoint, optimizer state, parameter groups); far
// deeper MARK nesting means the bytes are not one.
constexpr size_t kMaxMarkDepth = 64;

constexpr char kOrderedDict[] = "collections.OrderedDict";
constexpr char kRebuildTensor[] = "torch._utils._rebuild_tensor_v2";

std::optional<GgmlType> StorageType(const std::string& global) {
  if (global == "torch.FloatStorage") return GgmlType::kF32;
  if (global == "torch.HalfStorage") return GgmlType::kF16;
  if (global == "torch.BFloat16Storage") return GgmlType::kBF16;
  return std::nullopt;
}

// A name from the file, quoted with control and non-ASCII bytes escaped for the terminal.
std::string Quoted(const std::string& name) {
  return absl::StrCat("'", absl::CHexEscape(name), "'");
}

PickleObject Make(PickleKind kind, int64_t integer = 0) {
  PickleObject o;
  o.kind = kind;
  o.integer = integer;
  return o;
}

}  // namespace

// One pass over the opcodes with Python's stack machine: a value stack split by MARKs,
// and a memo of object ids. Containers are objects in the Pickle, so an object fetched
// from the memo is the same one that later opcodes fill.
class Unpickler {
 public:
  explicit Unpickler(absl::Span<const uint8_t> bytes) : bytes_(bytes) {}

  absl::StatusOr<Pickle> Run() {
    while (pos_ < bytes_.size()) {
      op_pos_ = pos_;
      const uint8_t op = bytes_[pos_++];
      if (op == kStop) return Finish();
      if (absl::Status s = Step(op); !s.ok()) return s;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("the pickle ends after ", bytes_.size(), " bytes without STOP (truncated?)"));
  }

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("pickle byte ", op_pos_, ": ", what));
  }

  absl::Status Step(uint8_t op) {
    switch (op) {
      case kProto: return Proto();
      case kMark: return Mark();
      case kEmptyDict: return Push(Make(PickleKind::kDict));
      case kEmptyList: return Push(Make(PickleKind::kList));
      case kEmptyTuple: return Push(Make(PickleKind::kTuple));
      case kNone: return Push(Make(PickleKind::kNone));
      case kNewTrue: return Push(Make(PickleKind::kBool, 1));
      case kNewFalse: return Push(Make(PickleKind::kBool, 0));
      case kBinInt: return Int(4, /*is_signed=*/true);
      case kBinInt1: return Int(1, /*is_signed=*/false);
      case kBinInt2: return Int(2, /*is_signed=*/false);
      case kLong1: return Long1();
      case kBinFloat: return BinFloat();
      case kBinUnicode:
      case kBinString: return String(4);
      case kShortBinUnicode:
      case kShortBinString: return String(1);
      case kGlobal: return Global();
      case kTuple: return TupleToMark();
      case kTuple1: return TupleOf(1);
      case kTuple2: return TupleOf(2);
      case kTuple3: return TupleOf(3);
      case kBinPut: return Put(1);
      case kLongBinPut: return Put(4);
      case kMemoize: return Memoize();
      case kBinGet: return Get(1);
      case kLongBinGet: return Get(4);
      case kSetItem: return AddToContainer(PickleKind::kDict, /*to_mark=*/false);
      case kSetItems: return AddToContainer(PickleKind::kDict, /*to_mark=*/true);
      case kAppend: return AddToContainer(PickleKind::kList, /*to_mark=*/false);
      case kAppends: return AddToContainer(PickleKind::kList, /*to_mark=*/true);
      case kBuild: return Build();
      case kReduce: return Reduce();
      case kBinPersId: return PersistentId();
    }
    return Error(
        absl::StrFormat("opcode 0x%02x is not one torch.save writes for a state dict", op));
  }

  // --- Operands ------------------------------------------------------------------------

  absl::StatusOr<uint64_t> ReadUint(int bytes) {
    if (bytes_.size() - pos_ < static_cast<size_t>(bytes)) return Error("operand past the end");
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t{bytes_[pos_ + i]} << (8 * i);
    pos_ += bytes;
    return v;
  }

  absl::StatusOr<std::string> ReadBytes(uint64_t n) {
    if (bytes_.size() - pos_ < n) {
      return Error(absl::StrCat("a string of ", n, " bytes runs past the end"));
    }
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }

  absl::StatusOr<std::string> ReadLine() {
    const uint8_t* start = bytes_.data() + pos_;
    const void* newline = std::memchr(start, '\n', bytes_.size() - pos_);
    if (newline == nullptr) return Error("GLOBAL without a newline-terminated name");
    const size_t n = static_cast<const uint8_t*>(newline) - start;
    pos_ += n + 1;
    return std::string(reinterpret_cast<const char*>(start), n);
  }

  // --- The stack -----------------------------------------------------------------------

  absl::Status Push(PickleObject o) {
    stack_.push_back(static_cast<int>(out_.objects_.size()));
    out_.objects_.push_back(std::move(o));
    return absl::OkStatus();
  }

  // Values below the innermost MARK belong to an enclosing container and are not poppable.
  size_t Floor() const { return marks_.empty() ? 0 : marks_.back(); }

  absl::StatusOr<int> Pop() {
    if (stack_.size() <= Floor()) return Error("stack underflow");
    const int id = stack_.back();
    stack_.pop_back();
    return id;
  }

  absl::StatusOr<std::vector<int>> PopToMark() {
    if (marks_.empty()) return Error("no MARK to pop to");
    std::vector<int> items(stack_.begin() + marks_.back(), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }

  PickleObject& Object(int id) { return out_.objects_[id]; }

  // --- Opcodes -------------------------------------------------------------------------

  absl::Status Proto() {
    absl::StatusOr<uint64_t> version = ReadUint(1);
    if (!version.ok()) return version.status();
    if (*version > kHighestProtocol) {
      return Error(absl::StrCat("pickle protocol ", *version, " is unknown"));
    }
    return absl::OkStatus();
  }

  absl::Status Mark() {
    if (marks_.size() == kMaxMarkDepth) {
      return Error(absl::StrCat("nested deeper than ", kMaxMarkDepth, " levels"));
    }
    marks_.push_back(stack_.size());
    return absl::OkStatus();
  }

  absl::Status Int(int bytes, bool is_signed) {
    absl::StatusOr<uint64_t> v = ReadUint(bytes);
    if (!v.ok()) return v.status();
    const int64_t value = is_signed ? static_cast<int32_t>(*v) : static_cast<int64_t>(*v);
    return Push(Make(PickleKind::kInt, value));
  }

  // A little-endian two's-complement integer of a given byte count; wider than 64 bits is
  // no size or count a checkpoint needs.
  absl::Status Long1() {
    absl::StatusOr<uint64_t> n = ReadUint(1);
    if (!n.ok()) return n.status();
    if (*n > 8) return Error(absl::StrCat("a ", *n, "-byte integer is too large"));
    absl::StatusOr<uint64_t> v = ReadUint(static_cast<int>(*n));
    if (!v.ok()) return v.status();
    uint64_t bits = *v;
    if (*n > 0 && *n < 8 && (bits >> (8 * *n - 1)) & 1) bits |= ~uint64_t{0} << (8 * *n);
    return Push(Make(PickleKind::kInt, static_cast<int64_t>(bits)));
  }

  absl::Status BinFloat() {  // big-endian, unlike every other operand
    if (bytes_.size() - pos_ < 8) return Error("operand past the end");
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = bits << 8 | bytes_[pos_ + i];
    pos_ += 8;
    PickleObject o = Make(PickleKind::kFloat);
    std::memcpy(&o.number, &bits, sizeof(bits));
    return Push(std::move(o));
  }

  // Strings with a 1- or 4-byte length; BINSTRING's is signed, so a negative one is huge here.
  absl::Status String(int length_bytes) {
    absl::StatusOr<uint64_t> n = ReadUint(length_bytes);
    if (!n.ok()) return n.status();
    absl::StatusOr<std::string> s = ReadBytes(*n);
    if (!s.ok()) return s.status();
    PickleObject o = Make(PickleKind::kString);
    o.text = *std::move(s);
    return Push(std::move(o));
  }

  // Only a name: what it stands for is decided by REDUCE and BINPERSID.
  absl::Status Global() {
    absl::StatusOr<std::string> module = ReadLine();
    if (!module.ok()) return module.status();
    absl::StatusOr<std::string> name = ReadLine();
    if (!name.ok()) return name.status();
    PickleObject o = Make(PickleKind::kGlobal);
    o.text = absl::StrCat(*module, ".", *name);
    if (o.text != kOrderedDict && o.text != kRebuildTensor && !StorageType(o.text)) {
      if (*module == "torch" && absl::EndsWith(*name, "Storage")) {
        return Error(absl::StrCat("storage type ", Quoted(o.text),
                                  " is not supported (only float32, "
                                  "float16 and bfloat16 storages are)"));
      }
      return Error(absl::StrCat("global ", Quoted(o.text),
                                " is forbidden: only tensors, their storages "
                                "and OrderedDict may be rebuilt"));
    }
    return Push(std::move(o));
  }

  absl::Status TupleToMark() {
    absl::StatusOr<std::vector<int>> items = PopToMark();
    if (!items.ok()) return items.status();
    PickleObject o = Make(PickleKind::kTuple);
    o.items = *std::move(items);
    return Push(std::move(o));
  }

  absl::Status TupleOf(int n) {
    PickleObject o = Make(PickleKind::kTuple);
    o.items.resize(n);
    for (int i = n - 1; i >= 0; --i) {
      absl::StatusOr<int> id = Pop();
      if (!id.ok()) return id.status();
      o.items[i] = *id;
    }
    return Push(std::move(o));
  }

  absl::Status Put(int index_bytes) {
    absl::StatusOr<uint64_t> index = ReadUint(index_bytes);
    if (!index.ok()) return index.status();
    if (stack_.size() <= Floor()) return Error("memo store from an empty stack");
    memo_[*index] = stack_.back();
    return absl::OkStatus();
  }

  absl::Status Memoize() {
    if (stack_.size() <= Floor()) return Error("memo store from an empty stack");
    memo_[memo_.size()] = stack_.back();
    return absl::OkStatus();
  }

  absl::Status Get(int index_bytes) {
    absl::StatusOr<uint64_t> index = ReadUint(index_bytes);
    if (!index.ok()) return index.status();
    const auto it = memo_.find(*index);
    if (it == memo_.end()) return Error(absl::StrCat("memo index ", *index, " was never stored"));
    stack_.push_back(it->second);
    return absl::OkStatus();
  }

  // SETITEM(S) and APPEND(S): one value (or key and value) or everything above the MARK,
  // added to the dict or list below.
  absl::Status AddToContainer(PickleKind kind, bool to_mark) {
    std::vector<int> items;
    if (to_mark) {
      absl::StatusOr<std::vector<int>> popped = PopToMark();
      if (!popped.ok()) return popped.status();
      items = *std::move(popped);
    } else {
      for (int i = kind == PickleKind::kDict ? 2 : 1; i > 0; --i) {
        absl::StatusOr<int> id = Pop();
        if (!id.ok()) return id.status();
        items.insert(items.begin(), *id);
      }
    }
    if (kind == PickleKind::kDict && items.size() % 2 != 0) {
      return Error("SETITEMS with a key but no value");
    }
    if (stack_.size() <= Floor() || Object(stack_.back()).kind != kind) {
      return Error(kind == PickleKind::kDict ? "SETITEM without a dict" : "APPEND without a list");
    }
    std::vector<int>& container = Object(stack_.back()).items;
    container.insert(container.end(), items.begin(), items.end());
    return absl::OkStatus();
  }

  // state_dict() pickles as an OrderedDict with a `_metadata` attribute (module versions),
  // which BUILD would set; it carries no weights and is dropped.
  absl::Status Build() {
    absl::StatusOr<int> state = Pop();
    if (!state.ok()) return state.status();
    if (stack_.size() <= Floor() || Object(stack_.back()).kind != PickleKind::kDict) {
      return Error("BUILD on something other than a dict");
    }
    return absl::OkStatus();
  }

  absl::Status Reduce() {
    absl::StatusOr<int> args = Pop();
    if (!args.ok()) return args.status();
    absl::StatusOr<int> callable = Pop();
    if (!callable.ok()) return callable.status();
    const PickleObject& f = Object(*callable);
    if (f.kind != PickleKind::kGlobal || Object(*args).kind != PickleKind::kTuple) {
      return Error("REDUCE needs a global and an argument tuple");
    }
    if (f.text == kOrderedDict) {
      if (!Object(*args).items.empty()) return Error("OrderedDict with arguments");
      return Push(Make(PickleKind::kDict));
    }
    if (f.text == kRebuildTensor) return RebuildTensor(Object(*args).items);
    return Error(absl::StrCat(Quoted(f.text), " cannot be called"));
  }

  bool IsInt(int id, int64_t min) {
    return Object(id).kind == PickleKind::kInt && Object(id).integer >= min;
  }

  // A tuple of non-negative ints (a tensor's size or stride), or nullopt.
  std::optional<std::vector<int64_t>> Dims(int id) {
    if (Object(id).kind != PickleKind::kTuple) return std::nullopt;
    std::vector<int64_t> dims;
    for (int item : Object(id).items) {
      if (!IsInt(item, 0)) return std::nullopt;
      dims.push_back(Object(item).integer);
    }
    return dims;
  }

  // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
  // backward_hooks[, metadata]); only the view's geometry is kept.
  absl::Status RebuildTensor(std::vector<int> args) {
    if (args.size() != 6 && args.size() != 7) {
      return Error(absl::StrCat("_rebuild_tensor_v2 with ", args.size(), " arguments"));
    }
    std::optional<std::vector<int64_t>> shape = Dims(args[2]), stride = Dims(args[3]);
    if (Object(args[0]).kind != PickleKind::kStorage || !IsInt(args[1], 0) || !shape || !stride ||
        shape->size() != stride->size() || Object(args[4]).kind != PickleKind::kBool ||
        Object(args[5]).kind != PickleKind::kDict) {
      return Error("_rebuild_tensor_v2 with arguments that do not describe a tensor view");
    }
    TorchTensor t{out_.storages_[Object(args[0]).integer], Object(args[1]).integer,
                  *std::move(shape), *std::move(stride)};
    out_.tensors_.push_back(std::move(t));
    return Push(Make(PickleKind::kTensor, static_cast<int64_t>(out_.tensors_.size() - 1)));
  }

  // ('storage', storage type, key, location, numel): torch.save's reference to the
  // archive entry data/<key>.
  absl::Status PersistentId() {
    absl::StatusOr<int> id = Pop();
    if (!id.ok()) return id.status();
    const std::vector<int> pid =
        Object(*id).kind == PickleKind::kTuple ? Object(*id).items : std::vector<int>{};
    const bool well_formed = pid.size() == 5 && Object(pid[0]).kind == PickleKind::kString &&
                             Object(pid[0]).text == "storage" &&
                             Object(pid[1]).kind == PickleKind::kGlobal &&
                             Object(pid[2]).kind == PickleKind::kString &&
                             Object(pid[3]).kind == PickleKind::kString && IsInt(pid[4], 0);
    if (!well_formed) {
      return Error("a persistent id that is not ('storage', type, key, location, numel)");
    }
    const std::optional<GgmlType> dtype = StorageType(Object(pid[1]).text);
    if (!dtype) return Error(absl::StrCat(Quoted(Object(pid[1]).text), " is not a storage type"));
    out_.storages_.push_back({*dtype, Object(pid[2]).text, Object(pid[4]).integer});
    return Push(Make(PickleKind::kStorage, static_cast<int64_t>(out_.storages_.size() - 1)));
  }

  absl::StatusOr<Pickle> Finish() {
    if (!marks_.empty() || stack_.size() != 1) {
      return Error(absl::StrCat("STOP with ", stack_.size(), " values and ", marks_.size(),
                                " open MARKs on the stack instead of one value"));
    }
    out_.root_ = stack_.back();
    return std::move(out_);
  }

  absl::Span<const uint8_t> bytes_;
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  std::vector<int> stack_;
  std::vector<size_t> marks_;  // stack sizes at each open MARK
  std::unordered_map<uint64_t, int> memo_;
  Pickle out_;
};

absl::StatusOr<Pickle> Pickle::Parse(absl::Span<const uint8_t> bytes) {
  // Object ids are ints, and each opcode makes at most one object.
  if (bytes.size() > INT_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("a pickle of ", bytes.size(), " bytes is too large for a state dict"));
  }
  return Unpickler(bytes).Run();
}

const PickleObject* Pickle::Find(const PickleObject& dict, std::string_view key) const {
  const PickleObject* found = nullptr;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PickleObject& k = objects_[dict.items[i]];
    if (k.kind == PickleKind::kString && k.text == key) found = &objects_[dict.items[i + 1]];
  }
  return found;
}

}  // namespace toyllm
