#include "models/gguf_reader.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <iterator>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/gguf_file.h"
#include "runtime/weight_convert.h"
#include "tokenizer/sentencepiece_proto.h"

namespace toyllm {
namespace {

bool IsFloatAligned(const GgufTensor& t) {
  return reinterpret_cast<uintptr_t>(t.data) % alignof(float) == 0;
}

// Whether TensorMapper copies a tensor to float32: vectors (norms) stored in another type,
// and float32 tensors the file misaligns. Matrices of the other types are read in place
// (their kernels load bytes without alignment).
bool NeedsCopy(const GgufTensor& t) {
  return t.type == GgmlType::kF32 ? !IsFloatAligned(t) : t.dims.size() == 1;
}

// Maps a GGUF file's tensors into a ModelFile: matrices in place, in their stored type.
class TensorMapper {
 public:
  TensorMapper(const GgufFile& gguf, ModelFile& model) : gguf_(gguf), model_(model) {}

  // A tensor of exactly the given ggml dims (contiguous axis first), as float32.
  absl::StatusOr<const float*> Floats(const std::string& name, std::vector<int64_t> dims) {
    absl::StatusOr<const GgufTensor*> found = Find(name, dims);
    if (!found.ok()) return found.status();
    const GgufTensor* t = *found;
    if (t->type == GgmlType::kF32 && IsFloatAligned(*t)) return reinterpret_cast<const float*>(t->data);
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float>& copy = model_.converted.emplace_back(n);
    ToFloat32(t->type, t->data, n, copy.data());
    return copy.data();
  }

  // A matrix in place, in its stored type; float32 only when the file misaligns one.
  // The file's first tensor that no Floats or Linear call asked for, or null.
  const GgufTensor* FirstUnused() const {
    for (const GgufTensor& t : gguf_.tensors()) {
      if (used_.count(t.name) == 0) return &t;
    }
    return nullptr;
  }

  absl::StatusOr<Matrix> Linear(const std::string& name, int rows, int cols) {
    absl::StatusOr<const GgufTensor*> t = Find(name, {cols, rows});
    if (!t.ok()) return t.status();
    if (IsBlockQuantized((*t)->type)) {
      const int64_t blocks = WeightBytes((*t)->type, int64_t{rows} * cols) / BlockShapeOf((*t)->type).bytes;
      if (int64_t bad = FirstNonFiniteScale((*t)->type, (*t)->data, blocks); bad >= 0) {
        return absl::InvalidArgumentError(absl::StrCat(gguf_.path(), ": tensor '", name, "' block ", bad,
                                                       " has a non-finite scale (NaN or infinity)"));
      }
    }
    if (!NeedsCopy(**t)) return Matrix{(*t)->data, rows, cols, (*t)->type};
    absl::StatusOr<const float*> data = Floats(name, {cols, rows});
    if (!data.ok()) return data.status();
    return Matrix{*data, rows, cols};
  }

 private:
  absl::StatusOr<const GgufTensor*> Find(const std::string& name, const std::vector<int64_t>& dims) {
    const GgufTensor* t = gguf_.FindTensor(name);
    if (t == nullptr) {
      return absl::NotFoundError(absl::StrCat(gguf_.path(), ": tensor '", name, "' is missing"));
    }
    if (t->dims != dims) {
      return absl::InvalidArgumentError(absl::StrCat(
          gguf_.path(), ": tensor '", name, "' has dims [", absl::StrJoin(t->dims, ", "),
          "], expected [", absl::StrJoin(dims, ", "), "] from the metadata"));
    }
    used_.insert(name);
    return t;
  }

  const GgufFile& gguf_;
  ModelFile& model_;
  std::set<std::string> used_{"rope_freqs.weight"};  // read into the config, if present
};

// An integer hyper-parameter; `fallback` when the key is absent and fallback >= 0.
absl::StatusOr<int> GetDim(const GgufFile& gguf, const std::string& key, int fallback = -1) {
  if (!gguf.Has(key) && fallback >= 0) return fallback;
  absl::StatusOr<int64_t> value = gguf.GetInt(key);
  if (!value.ok()) return value.status();
  if (*value < 0 || *value > INT_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat(gguf.path(), ": ", key, " = ", *value, " is out of range"));
  }
  return static_cast<int>(*value);
}

// The general.architecture values toyllm runs; ReadConfig maps what each adds to Llama.
constexpr const char* kArchitectures[] = {"llama", "qwen2", "qwen3"};

absl::StatusOr<ModelConfig> ReadConfig(const GgufFile& gguf, const std::string& arch) {
  ModelConfig c;
  const std::string p = arch + ".";
  for (auto [key, field] : {std::pair{"embedding_length", &c.dim},
                            std::pair{"feed_forward_length", &c.hidden_dim},
                            std::pair{"block_count", &c.n_layers},
                            std::pair{"attention.head_count", &c.n_heads},
                            std::pair{"context_length", &c.context_length}}) {
    absl::StatusOr<int> value = GetDim(gguf, p + key);
    if (!value.ok()) return value.status();
    *field = *value;
  }
  absl::StatusOr<int> kv_heads = GetDim(gguf, p + "attention.head_count_kv", c.n_heads);
  if (!kv_heads.ok()) return kv_heads.status();
  c.n_kv_heads = *kv_heads;
  if (c.n_kv_heads > 0 && c.n_heads % c.n_kv_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        gguf.path(), ": ", p, "attention.head_count_kv = ", c.n_kv_heads, " does not divide ", p,
        "attention.head_count = ", c.n_heads));
  }
  if (!gguf.Has(p + "attention.key_length") && c.n_heads > 0 && c.dim % c.n_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        gguf.path(), ": ", p, "embedding_length = ", c.dim, " is not a multiple of ", p,
        "attention.head_count = ", c.n_heads, " (and there is no ", p, "attention.key_length)"));
  }
  const int default_head_dim = c.n_heads > 0 && c.dim % c.n_heads == 0 ? c.dim / c.n_heads : 0;
  absl::StatusOr<int> head_dim = GetDim(gguf, p + "attention.key_length", default_head_dim);
  if (!head_dim.ok()) return head_dim.status();
  c.head_dim = *head_dim;
  absl::StatusOr<int> rope_dims = GetDim(gguf, p + "rope.dimension_count", c.head_dim);
  if (!rope_dims.ok()) return rope_dims.status();
  // llama.cpp rotates the first rope.dimension_count coordinates: 0 is no RoPE at all.
  if (*rope_dims != c.head_dim && *rope_dims != 0) {
    return absl::UnimplementedError(absl::StrCat(gguf.path(), ": RoPE over ", *rope_dims,
                                                 " of ", c.head_dim, " head dimensions is not supported"));
  }
  for (auto [key, field, fallback] :
       {std::tuple{"attention.layer_norm_rms_epsilon", &c.norm_eps, 1e-5f},
        std::tuple{"rope.freq_base", &c.rope_theta, 10000.0f}}) {
    if (!gguf.Has(p + key)) {
      *field = fallback;
      continue;
    }
    absl::StatusOr<double> value = gguf.GetFloat(p + key);
    if (!value.ok()) return value.status();
    *field = static_cast<float>(*value);
  }
  absl::StatusOr<int> value_dim = GetDim(gguf, p + "attention.value_length", c.head_dim);
  if (!value_dim.ok()) return value_dim.status();
  if (*value_dim != c.head_dim) {
    return absl::UnimplementedError(absl::StrCat(gguf.path(), ": ", p, "attention.value_length = ",
                                                 *value_dim, " differs from the key length ", c.head_dim));
  }
  // llama.cpp's converter un-permutes Llama's Q and K from Hugging Face's rotate-half
  // layout to adjacent pairs ("norm" RoPE); Qwen's it keeps as they are ("neox").
  if (*rope_dims == 0) {
    c.rope_layout = RopeLayout::kNone;
  } else {
    c.rope_layout = arch == "llama" ? RopeLayout::kInterleaved : RopeLayout::kHalfSplit;
  }
  // Qwen 2 adds a bias to q, k and v (llama.cpp requires them); Llama files may have them.
  c.qkv_bias = arch == "qwen2" || (arch == "llama" && gguf.FindTensor("blk.0.attn_q.bias") != nullptr);
  c.qk_norm = arch == "qwen3";
  // GGUF has no key for a model without norms; toyllm's own writes this one.
  if (gguf.Has(kNormKey)) {
    absl::StatusOr<std::string> norm = gguf.GetString(kNormKey);
    if (!norm.ok()) return norm.status();
    if (*norm != "none" && *norm != "rms") {
      return absl::InvalidArgumentError(absl::StrCat(gguf.path(), ": ", kNormKey, " '", *norm,
                                                     "' is neither 'rms' nor 'none'"));
    }
    c.norm = *norm == "none" ? NormKind::kNone : NormKind::kRmsNorm;
  }
  return c;
}

// One of the tokenizer.ggml.*_token_id keys into *id, left alone when absent; llama.cpp
// writes "no such token" as -1, stored in a uint32.
absl::Status ReadTokenId(const GgufFile& gguf, const char* key, int n, int* id) {
  const std::string full = absl::StrCat("tokenizer.ggml.", key);
  if (!gguf.Has(full)) return absl::OkStatus();
  absl::StatusOr<int64_t> value = gguf.GetInt(full);
  if (!value.ok()) return value.status();
  if (*value == -1 || *value == 0xFFFFFFFF) {
    *id = -1;
    return absl::OkStatus();
  }
  if (*value < 0 || *value >= n) {
    return absl::InvalidArgumentError(
        absl::StrCat(gguf.path(), ": ", full, " = ", *value, " is outside the ", n, " tokens"));
  }
  *id = static_cast<int>(*value);
  return absl::OkStatus();
}

// The Llama (SentencePiece) arrays, rebuilt into a ModelProto.
absl::StatusOr<Vocabulary> ReadSentencePiece(const GgufFile& gguf, std::vector<std::string> pieces) {
  VocabularyArrays v;
  v.pieces = std::move(pieces);
  if (gguf.Has("tokenizer.ggml.scores")) {
    absl::StatusOr<std::vector<float>> scores = gguf.GetFloatArray("tokenizer.ggml.scores");
    if (!scores.ok()) return scores.status();
    v.scores = *std::move(scores);
  }
  if (gguf.Has("tokenizer.ggml.token_type")) {
    absl::StatusOr<std::vector<int32_t>> types = gguf.GetIntArray("tokenizer.ggml.token_type");
    if (!types.ok()) return types.status();
    v.types = *std::move(types);
  }
  const int n = static_cast<int>(v.pieces.size());
  for (auto [key, id] : {std::pair{"unknown_token_id", &v.unk_id}, std::pair{"bos_token_id", &v.bos_id},
                         std::pair{"eos_token_id", &v.eos_id}, std::pair{"padding_token_id", &v.pad_id}}) {
    if (absl::Status s = ReadTokenId(gguf, key, n, id); !s.ok()) return s;
  }
  return SentencePieceVocabulary(BuildSentencePieceModel(v));
}

// The byte-level BPE ("gpt2") keys as llama.cpp's converter writes them.
absl::StatusOr<Vocabulary> ReadBytePairs(const GgufFile& gguf, std::vector<std::string> tokens) {
  Vocabulary v;
  v.model = "gpt2";
  v.tokens = std::move(tokens);
  const int n = static_cast<int>(v.tokens.size());
  if (gguf.Has("tokenizer.ggml.token_type")) {
    absl::StatusOr<std::vector<int32_t>> types = gguf.GetIntArray("tokenizer.ggml.token_type");
    if (!types.ok()) return types.status();
    if (static_cast<int>(types->size()) != n) {
      return absl::InvalidArgumentError(absl::StrCat(gguf.path(), ": tokenizer.ggml.token_type has ",
                                                     types->size(), " entries for ", n, " tokens"));
    }
    v.types = *std::move(types);
  }
  absl::StatusOr<std::vector<std::string>> merges = gguf.GetStringArray("tokenizer.ggml.merges");
  if (!merges.ok()) return merges.status();
  v.merges = *std::move(merges);
  if (gguf.Has("tokenizer.ggml.pre")) {
    absl::StatusOr<std::string> pre = gguf.GetString("tokenizer.ggml.pre");
    if (!pre.ok()) return pre.status();
    v.pre = *std::move(pre);
  }
  if (gguf.Has(kPreRegexesKey)) {
    absl::StatusOr<std::vector<std::string>> regexes = gguf.GetStringArray(kPreRegexesKey);
    if (!regexes.ok()) return regexes.status();
    v.pre_regexes = *std::move(regexes);
  }
  for (auto [key, id] : {std::pair{"bos_token_id", &v.bos_id}, std::pair{"eos_token_id", &v.eos_id},
                         std::pair{"eot_token_id", &v.eot_id}, std::pair{"unknown_token_id", &v.unk_id},
                         std::pair{"padding_token_id", &v.pad_id}}) {
    if (absl::Status s = ReadTokenId(gguf, key, n, id); !s.ok()) return s;
  }
  // llama.cpp's default when the key is absent: BOS for Llama 3's pre-tokenizer only.
  v.add_bos = v.pre == "llama-bpe" && v.bos_id >= 0;
  if (gguf.Has("tokenizer.ggml.add_bos_token")) {
    absl::StatusOr<bool> add = gguf.GetBool("tokenizer.ggml.add_bos_token");
    if (!add.ok()) return add.status();
    v.add_bos = *add;
  }
  v.ignore_merges = v.pre == "llama-bpe";  // as llama.cpp does for Llama 3
  return v;
}

absl::StatusOr<Vocabulary> ReadTokenizer(const GgufFile& gguf) {
  if (gguf.Has(kSentencePieceModelKey)) {
    absl::StatusOr<std::string> proto = gguf.GetByteArray(kSentencePieceModelKey);
    if (!proto.ok()) return proto.status();
    return SentencePieceVocabulary(*std::move(proto));
  }
  if (!gguf.Has("tokenizer.ggml.tokens")) return Vocabulary();
  absl::StatusOr<std::string> kind = gguf.GetString("tokenizer.ggml.model");
  if (!kind.ok()) return kind.status();
  absl::StatusOr<std::vector<std::string>> tokens = gguf.GetStringArray("tokenizer.ggml.tokens");
  if (!tokens.ok()) return tokens.status();
  if (*kind == "llama") return ReadSentencePiece(gguf, *std::move(tokens));
  if (*kind == "gpt2") return ReadBytePairs(gguf, *std::move(tokens));
  return absl::UnimplementedError(absl::StrCat(gguf.path(), ": tokenizer.ggml.model '", *kind,
                                               "' is not supported (only 'llama', SentencePiece, and 'gpt2', byte-level BPE)"));
}

// {arch}.rope.scaling.*, read as llama.cpp reads them: the type defaults to linear, and the
// factor (or the older rope.scale_linear; 0 or absent meaning 1) divides every position,
// which is every frequency divided by it, so it joins the per-pair divisors. The other
// kinds (YaRN, LongRoPE) change RoPE in ways toyllm does not compute, and are refused.
absl::Status ReadRopeScaling(const GgufFile& gguf, const std::string& arch, ModelConfig* c) {
  const std::string p = arch + ".rope.";
  std::string type = "linear";
  if (gguf.Has(p + "scaling.type")) {
    absl::StatusOr<std::string> stored = gguf.GetString(p + "scaling.type");
    if (!stored.ok()) return stored.status();
    type = *stored;
  }
  if (type == "none") return absl::OkStatus();
  if (type != "linear") {
    return absl::UnimplementedError(absl::StrCat(gguf.path(), ": ", p, "scaling.type '", type,
                                                 "' is not supported (toyllm applies none or linear)"));
  }
  for (const std::string& key : {p + "scaling.factor", p + "scale_linear"}) {
    if (!gguf.Has(key)) continue;
    absl::StatusOr<double> factor = gguf.GetFloat(key);
    if (!factor.ok()) return factor.status();
    if (!(*factor >= 0.0 && std::isfinite(*factor))) {
      return absl::InvalidArgumentError(absl::StrCat(gguf.path(), ": ", key, " = ", *factor, " is not a positive factor"));
    }
    if (*factor == 0.0 || *factor == 1.0 || c->rope_layout == RopeLayout::kNone) return absl::OkStatus();
    c->rope_freq_factors.resize(c->head_dim / 2, 1.0f);
    for (float& f : c->rope_freq_factors) f *= static_cast<float>(*factor);
    return absl::OkStatus();
  }
  return absl::OkStatus();
}

// Llama 3.1's rope_freqs.weight: one divisor per RoPE pair, kept in the config.
absl::Status ReadRopeFactors(const GgufFile& gguf, ModelConfig* c) {
  const GgufTensor* t = gguf.FindTensor("rope_freqs.weight");
  if (c->rope_layout == RopeLayout::kNone || t->dims != std::vector<int64_t>{c->head_dim / 2}) {
    return absl::InvalidArgumentError(absl::StrCat(
        gguf.path(), ": tensor 'rope_freqs.weight' has dims [", absl::StrJoin(t->dims, ", "),
        "], expected [", c->head_dim / 2, "] (one per RoPE pair of a head)"));
  }
  c->rope_freq_factors.resize(c->head_dim / 2);
  ToFloat32(t->type, t->data, c->head_dim / 2, c->rope_freq_factors.data());
  for (float f : c->rope_freq_factors) {
    if (!(f > 0.0f && std::isfinite(f))) {
      return absl::InvalidArgumentError(absl::StrCat(
          gguf.path(), ": tensor 'rope_freqs.weight' holds ", f, ", not a positive frequency factor"));
    }
  }
  return absl::OkStatus();
}

absl::Status MapWeights(const GgufFile& gguf, ModelFile& model) {
  const ModelConfig& c = model.config;
  ModelWeights& w = model.weights;
  TensorMapper map(gguf, model);
  absl::StatusOr<Matrix> embedding = map.Linear("token_embd.weight", c.vocab_size, c.dim);
  if (!embedding.ok()) return embedding.status();
  w.token_embedding = *embedding;
  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& lw = w.layers[l];
    const std::string b = absl::StrCat("blk.", l, ".");
    for (auto [name, norm] : {std::pair{"attn_norm", &lw.attn_norm}, std::pair{"ffn_norm", &lw.ffn_norm}}) {
      if (c.norm == NormKind::kNone || (c.hidden_dim == 0 && norm == &lw.ffn_norm)) continue;
      absl::StatusOr<const float*> v = map.Floats(b + name + ".weight", {c.dim});
      if (!v.ok()) return v.status();
      *norm = *v;
    }
    for (auto [name, m, rows, cols] :
         {std::tuple{"attn_q", &lw.wq, c.q_dim(), c.dim}, std::tuple{"attn_k", &lw.wk, c.kv_dim(), c.dim},
          std::tuple{"attn_v", &lw.wv, c.kv_dim(), c.dim}, std::tuple{"attn_output", &lw.wo, c.dim, c.q_dim()},
          std::tuple{"ffn_gate", &lw.w1, c.hidden_dim, c.dim},
          std::tuple{"ffn_down", &lw.w2, c.dim, c.hidden_dim},
          std::tuple{"ffn_up", &lw.w3, c.hidden_dim, c.dim}}) {
      if (rows == 0 || cols == 0) continue;  // no feed-forward layer
      absl::StatusOr<Matrix> matrix = map.Linear(b + name + ".weight", rows, cols);
      if (!matrix.ok()) return matrix.status();
      *m = *matrix;
    }
    for (auto [name, vector, n, wanted] :
         {std::tuple{"attn_q.bias", &lw.bq, c.q_dim(), c.qkv_bias},
          std::tuple{"attn_k.bias", &lw.bk, c.kv_dim(), c.qkv_bias},
          std::tuple{"attn_v.bias", &lw.bv, c.kv_dim(), c.qkv_bias},
          std::tuple{"attn_q_norm.weight", &lw.q_norm, c.head_dim, c.qk_norm},
          std::tuple{"attn_k_norm.weight", &lw.k_norm, c.head_dim, c.qk_norm}}) {
      if (!wanted) continue;
      absl::StatusOr<const float*> v = map.Floats(b + name, {n});
      if (!v.ok()) return v.status();
      *vector = *v;
    }
  }
  if (c.norm != NormKind::kNone) {
    absl::StatusOr<const float*> output_norm = map.Floats("output_norm.weight", {c.dim});
    if (!output_norm.ok()) return output_norm.status();
    w.output_norm = *output_norm;
  }
  if (c.tied_output) {
    w.output = w.token_embedding;
  } else {
    absl::StatusOr<Matrix> output = map.Linear("output.weight", c.vocab_size, c.dim);
    if (!output.ok()) return output.status();
    w.output = *output;
  }
  // A tensor the forward pass would not read (an output bias, a qwen3 file's q/k/v biases)
  // means a model toyllm would compute wrongly: llama.cpp refuses such files too.
  if (const GgufTensor* unused = map.FirstUnused(); unused != nullptr) {
    return absl::UnimplementedError(absl::StrCat(gguf.path(), ": tensor '", unused->name,
                                                 "' is not part of the model toyllm runs for this architecture"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Vocabulary> ReadGgufVocabulary(const std::string& path) {
  absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  absl::StatusOr<GgufFile> gguf = GgufFile::Parse(**file);
  if (!gguf.ok()) return gguf.status();
  absl::StatusOr<Vocabulary> vocabulary = ReadTokenizer(*gguf);
  if (vocabulary.ok() && vocabulary->empty()) {
    return absl::NotFoundError(absl::StrCat(path, ": the GGUF file has no tokenizer (tokenizer.ggml.tokens)"));
  }
  return vocabulary;
}

absl::StatusOr<std::unique_ptr<ModelFile>> ReadGguf(std::unique_ptr<MappedFile> file) {
  absl::StatusOr<GgufFile> gguf = GgufFile::Parse(*file);
  if (!gguf.ok()) return gguf.status();
  absl::StatusOr<std::string> arch = gguf->GetString("general.architecture");
  if (!arch.ok()) return arch.status();
  if (std::find(std::begin(kArchitectures), std::end(kArchitectures), *arch) == std::end(kArchitectures)) {
    return absl::UnimplementedError(absl::StrCat(file->path(), ": architecture '", *arch,
                                                 "' is not supported (toyllm runs ",
                                                 absl::StrJoin(kArchitectures, ", "), ")"));
  }
  absl::StatusOr<ModelConfig> config = ReadConfig(*gguf, *arch);
  if (!config.ok()) return config.status();
  if (gguf->FindTensor("rope_freqs.weight") != nullptr) {
    if (absl::Status s = ReadRopeFactors(*gguf, &*config); !s.ok()) return s;
  }
  if (absl::Status s = ReadRopeScaling(*gguf, *arch, &*config); !s.ok()) return s;
  // The vocabulary size is the embedding's row count; llama.vocab_size is optional.
  const GgufTensor* embedding = gguf->FindTensor("token_embd.weight");
  if (embedding == nullptr || embedding->dims.size() != 2 || embedding->dims[1] > INT_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat(file->path(), ": tensor 'token_embd.weight' is missing or not a matrix"));
  }
  config->vocab_size = static_cast<int>(embedding->dims[1]);
  config->tied_output = gguf->FindTensor("output.weight") == nullptr;
  if (absl::Status s = ValidateConfig(*config); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(file->path(), ": bad metadata: ", s.message()));
  }

  int64_t converted_bytes = 0;
  for (const GgufTensor& t : gguf->tensors()) {
    if (!NeedsCopy(t)) continue;
    int64_t n = sizeof(float);
    for (int64_t d : t.dims) n *= d;
    converted_bytes += n;  // Parse bounds the tensors, which do not overlap, by the file
  }
  if (absl::Status s = CheckConversionFits(converted_bytes, file->path()); !s.ok()) return s;

  auto model = std::make_unique<ModelFile>();
  model->format = absl::StrCat("GGUF v", gguf->version(), " (", *arch, ")");
  model->config = *config;
  if (absl::Status s = MapWeights(*gguf, *model); !s.ok()) return s;
  absl::StatusOr<Vocabulary> vocabulary = ReadTokenizer(*gguf);
  if (!vocabulary.ok()) return vocabulary.status();
  model->vocabulary = *std::move(vocabulary);
  if (gguf->Has("tokenizer.chat_template")) {
    absl::StatusOr<std::string> chat_template = gguf->GetString("tokenizer.chat_template");
    if (!chat_template.ok()) return chat_template.status();
    model->chat_template = *std::move(chat_template);
  }
  for (const std::string& key : gguf->Keys()) model->metadata.emplace_back(key, gguf->Describe(key));
  for (const GgufTensor& t : gguf->tensors()) {
    model->tensors.push_back({t.name, GgmlTypeName(t.type), t.dims});
  }
  model->mappings.push_back(std::move(file));
  return model;
}

}  // namespace toyllm
