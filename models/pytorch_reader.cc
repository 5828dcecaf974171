#include "models/pytorch_reader.h"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/pickle_reader.h"
#include "models/ggml_type.h"
#include "runtime/weight_convert.h"
#include "models/zip_archive.h"

namespace toyllm {
namespace {

using nlohmann::json;

constexpr char kCompilePrefix[] = "_orig_mod.";  // torch.compile's wrapper module
constexpr int kDefaultContext = 2048;

absl::Status Error(const std::string& path, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
}

// A name from the file, quoted with control and non-ASCII bytes escaped for the terminal.
std::string Quoted(const std::string& name) {
  return absl::StrCat("'", absl::CHexEscape(name), "'");
}

std::string Directory(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string Dims(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

int ElementBytes(GgmlType dtype) { return dtype == GgmlType::kF32 ? 4 : 2; }

const char* TorchDtypeName(GgmlType dtype) {
  switch (dtype) {
    case GgmlType::kF16: return "float16";
    case GgmlType::kBF16: return "bfloat16";
    default: return "float32";
  }
}

// Sizes beyond int saturate; ValidateConfig then rejects them as out of range.
int Saturate(int64_t v) { return static_cast<int>(std::min<int64_t>(v, INT_MAX)); }

// Converting a double beyond float's range is undefined; clamped, ValidateConfig judges it.
float Narrow(double v) { return static_cast<float>(std::clamp<double>(v, -FLT_MAX, FLT_MAX)); }

// The hyper-parameters tensor shapes do not tell.
struct HyperParameters {
  std::optional<int64_t> n_heads, max_seq_len;
  std::optional<double> norm_eps, rope_theta;
};

// Meta's params.json, when one is beside the checkpoint; absent fields stay unset.
absl::Status ReadParamsJson(const std::string& path, HyperParameters& h) {
  absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return absl::OkStatus();
  const char* text = reinterpret_cast<const char*>((*file)->data());
  const json j = json::parse(text, text + (*file)->size(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Error(path, "not a JSON object");
  for (auto [key, field] :
       {std::pair{"n_heads", &h.n_heads}, std::pair{"max_seq_len", &h.max_seq_len}}) {
    if (!j.contains(key) || j[key].is_null()) continue;
    if (!j[key].is_number_integer()) {
      return Error(path, absl::StrCat("'", key, "' is not an integer"));
    }
    *field = j[key].get<int64_t>();
  }
  for (auto [key, field] :
       {std::pair{"norm_eps", &h.norm_eps}, std::pair{"rope_theta", &h.rope_theta}}) {
    if (!j.contains(key) || j[key].is_null()) continue;
    if (!j[key].is_number()) return Error(path, absl::StrCat("'", key, "' is not a number"));
    *field = j[key].get<double>();
  }
  return absl::OkStatus();
}

// train.py's model_args dict; None counts as absent (as n_kv_heads may be).
absl::Status ReadModelArgs(const Pickle& pickle, const PickleObject& args, const std::string& path,
                           HyperParameters& h) {
  for (auto [key, field] :
       {std::pair{"n_heads", &h.n_heads}, std::pair{"max_seq_len", &h.max_seq_len}}) {
    const PickleObject* v = pickle.Find(args, key);
    if (v == nullptr || v->kind == PickleKind::kNone) continue;
    if (v->kind != PickleKind::kInt) {
      return Error(path, absl::StrCat("model_args '", key, "' is not an integer"));
    }
    *field = v->integer;
  }
  for (auto [key, field] :
       {std::pair{"norm_eps", &h.norm_eps}, std::pair{"rope_theta", &h.rope_theta}}) {
    const PickleObject* v = pickle.Find(args, key);
    if (v == nullptr || v->kind == PickleKind::kNone) continue;
    if (v->kind != PickleKind::kFloat && v->kind != PickleKind::kInt) {
      return Error(path, absl::StrCat("model_args '", key, "' is not a number"));
    }
    *field = v->kind == PickleKind::kFloat ? v->number : static_cast<double>(v->integer);
  }
  return absl::OkStatus();
}

// The elements a strided view spans from its first to its last: 1 + Σ (size - 1) · stride,
// or 0 when it is empty; nullopt when that exceeds `limit`. Each step is checked against
// the room left, so nothing overflows.
std::optional<int64_t> ElementsSpanned(const TorchTensor& t, int64_t limit) {
  for (int64_t size : t.shape) {
    if (size == 0) return 0;
  }
  if (limit < 1) return std::nullopt;
  int64_t span = 1;
  for (size_t i = 0; i < t.shape.size(); ++i) {
    const int64_t steps = t.shape[i] - 1;
    if (steps == 0 || t.stride[i] == 0) continue;
    if (steps > (limit - span) / t.stride[i]) return std::nullopt;
    span += steps * t.stride[i];
  }
  return span;
}

bool IsRowMajor(const TorchTensor& t) {
  int64_t expected = 1;
  for (size_t i = t.shape.size(); i-- > 0;) {
    if (t.shape[i] != 1 && t.stride[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

// A state-dict tensor whose elements were checked to lie inside its storage's entry.
struct StoredTensor {
  TorchTensor view;
  const uint8_t* data = nullptr;  // the view's first element
};

// The state dict's tensors by name, with the "_orig_mod." of torch.compile removed.
class CheckpointTensors {
 public:
  CheckpointTensors(ModelFile& model, std::string path) : model_(model), path_(std::move(path)) {}

  absl::Status Collect(const Pickle& pickle, const PickleObject& state_dict, const ZipArchive& zip,
                       const std::string& prefix) {
    for (size_t i = 0; i + 1 < state_dict.items.size(); i += 2) {
      const PickleObject& key = pickle.at(state_dict.items[i]);
      const PickleObject& value = pickle.at(state_dict.items[i + 1]);
      if (key.kind != PickleKind::kString || value.kind != PickleKind::kTensor) continue;
      std::string name = key.text;
      if (name.rfind(kCompilePrefix, 0) == 0) name.erase(0, sizeof(kCompilePrefix) - 1);
      absl::StatusOr<const uint8_t*> data = Locate(pickle.tensor(value), name, zip, prefix);
      if (!data.ok()) return data.status();
      if (!tensors_.emplace(name, StoredTensor{pickle.tensor(value), *data}).second) {
        return Error(path_,
                     absl::StrCat("tensor ", Quoted(name), " appears twice in the state dict"));
      }
    }
    return absl::OkStatus();
  }

  const StoredTensor* Find(const std::string& name) const {
    const auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
  }

  absl::StatusOr<const StoredTensor*> Get(const std::string& name) const {
    const StoredTensor* t = Find(name);
    if (t == nullptr) {
      return absl::NotFoundError(absl::StrCat(path_, ": tensor '", name, "' is missing"));
    }
    return t;
  }

  // The bytes Floats may copy: every row-major tensor (Floats refuses others) that is not
  // aligned float32. Tensors may share a storage, so the sum saturates.
  int64_t ConvertedBytes() const {
    int64_t bytes = 0;
    for (const auto& [name, t] : tensors_) {
      const bool aligned = reinterpret_cast<uintptr_t>(t.data) % alignof(float) == 0;
      const std::vector<int64_t>& shape = t.view.shape;
      if ((t.view.storage.dtype == GgmlType::kF32 && aligned) || !IsRowMajor(t.view) ||
          std::count(shape.begin(), shape.end(), 0) > 0) {
        continue;
      }
      // Without a zero, a row-major view's elements are its span, which Locate checked.
      int64_t n = sizeof(float);
      for (int64_t d : shape) n *= d;
      bytes = n > INT64_MAX - bytes ? INT64_MAX : bytes + n;
    }
    return bytes;
  }

  // Distinct N of the "layers.N." tensors.
  int LayerCount() const {
    std::set<int> layers;
    for (const auto& [name, tensor] : tensors_) {
      const size_t dot = name.find('.', 7);
      int layer;
      if (name.rfind("layers.", 0) == 0 && dot != std::string::npos &&
          absl::SimpleAtoi(name.substr(7, dot - 7), &layer)) {
        layers.insert(layer);
      }
    }
    return static_cast<int>(layers.size());
  }

  // A tensor of exactly `shape` as float32: a view of the file when it is aligned float32,
  // else a converted copy.
  absl::StatusOr<const float*> Floats(const std::string& name, const std::vector<int64_t>& shape) {
    absl::StatusOr<const StoredTensor*> t = Get(name);
    if (!t.ok()) return t.status();
    const TorchTensor& view = (*t)->view;
    if (view.shape != shape) {
      return Error(path_, absl::StrCat("tensor '", name, "' has shape ", Dims(view.shape),
                                       ", not the ", Dims(shape), " the model's dimensions imply"));
    }
    if (!IsRowMajor(view)) {
      return Error(path_, absl::StrCat("tensor '", name, "' is not contiguous (strides ",
                                       Dims(view.stride), "); save it after .contiguous()"));
    }
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const GgmlType dtype = view.storage.dtype;
    if (dtype == GgmlType::kF32 && reinterpret_cast<uintptr_t>((*t)->data) % alignof(float) == 0) {
      return reinterpret_cast<const float*>((*t)->data);
    }
    std::vector<float>& values = model_.converted.emplace_back(n);
    ToFloat32(dtype, (*t)->data, n, values.data());
    return values.data();
  }

  absl::StatusOr<Matrix> Linear(const std::string& name, int rows, int cols) {
    absl::StatusOr<const float*> data = Floats(name, {rows, cols});
    if (!data.ok()) return data.status();
    return Matrix{*data, rows, cols};
  }

 private:
  // Where the first element of `t` is, once its storage entry is found to hold the
  // elements the persistent id announces and the view to stay within them.
  absl::StatusOr<const uint8_t*> Locate(const TorchTensor& t, const std::string& name,
                                        const ZipArchive& zip, const std::string& prefix) const {
    const std::string entry_name = absl::StrCat(prefix, "data/", t.storage.key);
    const ZipEntry* entry = zip.Find(entry_name);
    if (entry == nullptr) {
      return Error(path_, absl::StrCat("tensor ", Quoted(name), ": its storage ",
                                       Quoted(entry_name), " is not in the archive"));
    }
    const int64_t bytes = ElementBytes(t.storage.dtype);
    const int64_t numel = t.storage.numel;
    if (static_cast<uint64_t>(numel) > entry->size / bytes ||
        numel * bytes != static_cast<int64_t>(entry->size)) {
      return Error(path_,
                   absl::StrCat("tensor ", Quoted(name), ": storage ", Quoted(entry_name), " has ",
                                entry->size, " bytes, not the ", numel, " ",
                                TorchDtypeName(t.storage.dtype), " elements its pickle says"));
    }
    if (t.offset > numel || !ElementsSpanned(t, numel - t.offset)) {
      return Error(path_, absl::StrCat("tensor ", Quoted(name), " of shape ", Dims(t.shape),
                                       " at offset ", t.offset, " needs more than the ", numel,
                                       " elements of storage ", Quoted(entry_name)));
    }
    return entry->data + t.offset * bytes;
  }

  ModelFile& model_;
  std::string path_;
  std::map<std::string, StoredTensor> tensors_;
};

// The same elements: llama2.c ties the classifier to the embedding, so the state dict
// holds one storage under both names.
bool SameView(const StoredTensor& a, const StoredTensor& b) {
  return a.view.storage.key == b.view.storage.key && a.view.offset == b.view.offset &&
         a.view.shape == b.view.shape && a.view.stride == b.view.stride;
}

// A 2-D tensor's [rows, cols].
absl::StatusOr<std::pair<int64_t, int64_t>> MatrixShape(const CheckpointTensors& t,
                                                        const std::string& name,
                                                        const std::string& path) {
  absl::StatusOr<const StoredTensor*> tensor = t.Get(name);
  if (!tensor.ok()) return tensor.status();
  const std::vector<int64_t>& shape = (*tensor)->view.shape;
  if (shape.size() != 2) {
    return Error(path, absl::StrCat("tensor '", name, "' has shape ", Dims(shape), ", not 2-D"));
  }
  return std::pair{shape[0], shape[1]};
}

// Widths from the tensors' shapes, the head count and the rest from the hyper-parameters.
absl::StatusOr<ModelConfig> MakeConfig(const CheckpointTensors& t, const HyperParameters& h,
                                       const std::string& path) {
  absl::StatusOr<std::pair<int64_t, int64_t>> embedding =
      MatrixShape(t, "tok_embeddings.weight", path);
  if (!embedding.ok()) return embedding.status();
  ModelConfig c;
  c.vocab_size = Saturate(embedding->first);
  c.dim = Saturate(embedding->second);
  c.n_layers = t.LayerCount();
  if (!h.n_heads) {
    return Error(path,
                 "n_heads is unknown: neither the checkpoint's model_args nor a params.json "
                 "beside it gives it");
  }
  c.n_heads = Saturate(*h.n_heads);
  if (c.n_heads < 1 || c.dim < c.n_heads || c.dim % c.n_heads != 0) {
    return Error(path, absl::StrCat("n_heads = ", c.n_heads, " does not divide dim = ", c.dim));
  }
  c.head_dim = c.dim / c.n_heads;
  absl::StatusOr<std::pair<int64_t, int64_t>> w1 =
      MatrixShape(t, "layers.0.feed_forward.w1.weight", path);
  if (!w1.ok()) return w1.status();
  c.hidden_dim = Saturate(w1->first);
  absl::StatusOr<std::pair<int64_t, int64_t>> wk =
      MatrixShape(t, "layers.0.attention.wk.weight", path);
  if (!wk.ok()) return wk.status();
  if (wk->first % c.head_dim != 0) {
    return Error(path, absl::StrCat("layers.0.attention.wk.weight has ", wk->first,
                                    " rows, not a whole number of heads of ", c.head_dim));
  }
  c.n_kv_heads = Saturate(wk->first / c.head_dim);
  c.context_length = h.max_seq_len ? Saturate(*h.max_seq_len) : kDefaultContext;
  c.norm_eps = Narrow(h.norm_eps.value_or(1e-5));
  c.rope_theta = Narrow(h.rope_theta.value_or(10000.0));
  c.rope_layout = RopeLayout::kInterleaved;  // Meta's and llama2.c's layout: no permutation
  const StoredTensor* output = t.Find("output.weight");
  c.tied_output = output == nullptr || SameView(*output, *t.Find("tok_embeddings.weight"));
  if (absl::Status s = ValidateConfig(c); !s.ok()) return Error(path, s.message());
  return c;
}

absl::Status MapWeights(CheckpointTensors& t, ModelFile& model) {
  const ModelConfig& c = model.config;
  ModelWeights& w = model.weights;
  absl::StatusOr<Matrix> embedding = t.Linear("tok_embeddings.weight", c.vocab_size, c.dim);
  if (!embedding.ok()) return embedding.status();
  w.token_embedding = *embedding;
  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& lw = w.layers[l];
    const std::string p = absl::StrCat("layers.", l, ".");
    for (auto [name, norm] :
         {std::pair{"attention_norm", &lw.attn_norm}, std::pair{"ffn_norm", &lw.ffn_norm}}) {
      absl::StatusOr<const float*> v = t.Floats(p + name + ".weight", {c.dim});
      if (!v.ok()) return v.status();
      *norm = *v;
    }
    for (auto [name, m, rows, cols] :
         {std::tuple{"attention.wq", &lw.wq, c.q_dim(), c.dim},
          std::tuple{"attention.wk", &lw.wk, c.kv_dim(), c.dim},
          std::tuple{"attention.wv", &lw.wv, c.kv_dim(), c.dim},
          std::tuple{"attention.wo", &lw.wo, c.dim, c.q_dim()},
          std::tuple{"feed_forward.w1", &lw.w1, c.hidden_dim, c.dim},
          std::tuple{"feed_forward.w2", &lw.w2, c.dim, c.hidden_dim},
          std::tuple{"feed_forward.w3", &lw.w3, c.hidden_dim, c.dim}}) {
      absl::StatusOr<Matrix> matrix = t.Linear(p + name + ".weight", rows, cols);
      if (!matrix.ok()) return matrix.status();
      *m = *matrix;
    }
  }
  absl::StatusOr<const float*> norm = t.Floats("norm.weight", {c.dim});
  if (!norm.ok()) return norm.status();
  w.output_norm = *norm;
  if (c.tied_output) {
    w.output = w.token_embedding;
    return absl::OkStatus();
  }
  absl::StatusOr<Matrix> output = t.Linear("output.weight", c.vocab_size, c.dim);
  if (!output.ok()) return output.status();
  w.output = *output;
  return absl::OkStatus();
}

// torch.save names the archive's single folder after the file it first wrote, so the
// folder is found from its data.pkl rather than assumed.
absl::StatusOr<std::string> RecordPrefix(const ZipArchive& zip, const std::string& path) {
  std::vector<std::string> found;
  for (const auto& [name, entry] : zip.entries()) {
    const size_t slash = name.rfind('/');
    if (name.substr(slash == std::string::npos ? 0 : slash + 1) == "data.pkl") {
      found.push_back(name.substr(0, name.size() - 8));
    }
  }
  if (found.size() != 1) {
    return Error(path, absl::StrCat("a ZIP archive with ", found.size(),
                                    " data.pkl entries, not a torch.save checkpoint"));
  }
  return found[0];
}

// torch.save records a byteorder since 2.1; toyllm reads little-endian storages only.
absl::Status CheckByteOrder(const ZipArchive& zip, const std::string& prefix,
                            const std::string& path) {
  const ZipEntry* entry = zip.Find(prefix + "byteorder");
  if (entry == nullptr) return absl::OkStatus();
  const std::string order(reinterpret_cast<const char*>(entry->data), entry->size);
  if (order == "little") return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(path, ": storages are not little-endian"));
}

absl::StatusOr<Pickle> ReadPickle(const ZipArchive& zip, const std::string& prefix,
                                  const std::string& path) {
  const ZipEntry* entry = zip.Find(prefix + "data.pkl");
  absl::StatusOr<Pickle> pickle = Pickle::Parse(absl::MakeConstSpan(entry->data, entry->size));
  if (!pickle.ok()) {
    return absl::Status(pickle.status().code(),
                        absl::StrCat(path, ": ", absl::CHexEscape(prefix),
                                     "data.pkl: ", pickle.status().message()));
  }
  if (pickle->root().kind != PickleKind::kDict) return Error(path, "the checkpoint is not a dict");
  return pickle;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ModelFile>> ReadPytorchCheckpoint(const std::string& path) {
  absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  absl::StatusOr<ZipArchive> zip = ZipArchive::Parse(**file);
  if (!zip.ok()) return zip.status();
  absl::StatusOr<std::string> prefix = RecordPrefix(*zip, path);
  if (!prefix.ok()) return prefix.status();
  if (absl::Status s = CheckByteOrder(*zip, *prefix, path); !s.ok()) return s;
  absl::StatusOr<Pickle> pickle = ReadPickle(*zip, *prefix, path);
  if (!pickle.ok()) return pickle.status();

  // train.py nests the state dict under "model" beside its model_args; Meta's files are
  // the state dict itself.
  const PickleObject* nested = pickle->Find(pickle->root(), "model");
  const bool wrapped = nested != nullptr && nested->kind == PickleKind::kDict;
  const PickleObject& state_dict = wrapped ? *nested : pickle->root();
  HyperParameters h;
  if (absl::Status s = ReadParamsJson(Directory(path) + "/params.json", h); !s.ok()) return s;
  const PickleObject* args = wrapped ? pickle->Find(pickle->root(), "model_args") : nullptr;
  if (args != nullptr && args->kind == PickleKind::kDict) {
    if (absl::Status s = ReadModelArgs(*pickle, *args, path, h); !s.ok()) return s;
  }

  auto model = std::make_unique<ModelFile>();
  CheckpointTensors tensors(*model, path);
  if (absl::Status s = tensors.Collect(*pickle, state_dict, *zip, *prefix); !s.ok()) return s;
  if (absl::Status s = CheckConversionFits(tensors.ConvertedBytes(), path); !s.ok()) return s;
  absl::StatusOr<ModelConfig> config = MakeConfig(tensors, h, path);
  if (!config.ok()) return config.status();
  model->config = *config;
  model->format = absl::StrCat(
      "PyTorch checkpoint (",
      TorchDtypeName(tensors.Find("tok_embeddings.weight")->view.storage.dtype),
      h.max_seq_len ? "" : absl::StrCat("; context length unknown, assumed ", kDefaultContext),
      ")");
  if (absl::Status s = MapWeights(tensors, *model); !s.ok()) return s;
  model->mappings.push_back(*std::move(file));
  absl::StatusOr<std::unique_ptr<MappedFile>> tokenizer =
      MappedFile::Open(Directory(path) + "/tokenizer.model");
  if (tokenizer.ok()) {
    model->vocabulary = SentencePieceVocabulary(
        std::string(reinterpret_cast<const char*>((*tokenizer)->data()), (*tokenizer)->size()));
  }
  return model;
}

}  // namespace toyllm
