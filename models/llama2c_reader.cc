#include "models/llama2c_reader.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace toyllm {
namespace {

constexpr size_t kLegacyHeaderBytes = 7 * sizeof(int32_t);
constexpr size_t kVersionedHeaderBytes = 256;

// Hands out consecutive float arrays of the weight blob as views. Sizes were checked
// against the file length before the first one is taken.
class FloatCursor {
 public:
  explicit FloatCursor(const uint8_t* start)
      : next_(reinterpret_cast<const float*>(start)) {}
  const float* TakeVector(int64_t n) {
    const float* v = next_;
    next_ += n;
    return v;
  }
  Matrix TakeMatrix(int rows, int cols) {
    return {TakeVector(int64_t{rows} * cols), rows, cols};
  }

 private:
  const float* next_;
};

// Version 2 quantizes every matrix in groups: all its int8 values, then one float32 scale
// per group of `group_size` consecutive values. Matrices are dequantized into the model.
class Q8GroupCursor {
 public:
  Q8GroupCursor(const uint8_t* start, int group_size, ModelFile& model)
      : next_(start), group_size_(group_size), model_(model) {}
  Matrix TakeMatrix(int rows, int cols) {
    const int64_t n = int64_t{rows} * cols;
    const int8_t* q = reinterpret_cast<const int8_t*>(next_);
    const uint8_t* scales = next_ + n;
    std::vector<float>& out = model_.converted.emplace_back(n);
    for (int64_t g = 0; g < n / group_size_; ++g) {
      float scale;
      std::memcpy(&scale, scales + g * sizeof(float), sizeof(float));
      for (int64_t i = g * group_size_; i < (g + 1) * group_size_; ++i) out[i] = q[i] * scale;
    }
    next_ = scales + n / group_size_ * sizeof(float);
    return {out.data(), rows, cols};
  }

 private:
  const uint8_t* next_;
  const int group_size_;
  ModelFile& model_;
};

// The seven hyper-parameters every llama2.c header starts with; a negative vocab_size in
// the legacy format means the classifier is stored after the other weights.
ModelConfig ConfigFromHeader(const int32_t h[7]) {
  ModelConfig c;
  c.dim = h[0];
  c.hidden_dim = h[1];
  c.n_layers = h[2];
  c.n_heads = h[3];
  c.n_kv_heads = h[4];
  // INT32_MIN has no absolute value; kept as it is, validation rejects it by its real value.
  c.vocab_size = h[5] == INT32_MIN ? h[5] : std::abs(h[5]);
  c.context_length = h[6];
  c.head_dim = c.n_heads > 0 && c.dim % c.n_heads == 0 ? c.dim / c.n_heads : 0;
  c.norm_eps = 1e-5f;  // what llama2.c's run.c uses for every checkpoint
  c.rope_theta = 10000.0f;
  c.rope_layout = RopeLayout::kInterleaved;
  return c;
}

absl::Status CheckHeader(const ModelConfig& c, const std::string& path) {
  // llama2.c's blocks always have a feed-forward layer.
  if (c.hidden_dim < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": bad header: hidden_dim = ", c.hidden_dim, " must be positive"));
  }
  if (c.n_heads > 0 && c.dim % c.n_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": n_heads = ", c.n_heads, " does not divide dim = ", c.dim));
  }
  if (absl::Status s = ValidateConfig(c); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": bad header: ", s.message()));
  }
  return absl::OkStatus();
}

absl::Status CheckSize(const MappedFile& file, int64_t expected) {
  if (static_cast<int64_t>(file.size()) == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      file.path(), ": the header's dimensions need ", expected, " bytes but the file has ",
      file.size(), static_cast<int64_t>(file.size()) < expected ? " (truncated?)" : ""));
}

// The per-layer arrays, each stored for all layers before the next kind begins.
template <typename Cursor>
void TakeLayerMatrices(const ModelConfig& c, Cursor& cursor, ModelWeights& w) {
  for (auto& l : w.layers) l.wq = cursor.TakeMatrix(c.q_dim(), c.dim);
  for (auto& l : w.layers) l.wk = cursor.TakeMatrix(c.kv_dim(), c.dim);
  for (auto& l : w.layers) l.wv = cursor.TakeMatrix(c.kv_dim(), c.dim);
  for (auto& l : w.layers) l.wo = cursor.TakeMatrix(c.dim, c.q_dim());
}

template <typename Cursor>
void TakeFeedForward(const ModelConfig& c, Cursor& cursor, ModelWeights& w) {
  for (auto& l : w.layers) l.w1 = cursor.TakeMatrix(c.hidden_dim, c.dim);
  for (auto& l : w.layers) l.w2 = cursor.TakeMatrix(c.dim, c.hidden_dim);
  for (auto& l : w.layers) l.w3 = cursor.TakeMatrix(c.hidden_dim, c.dim);
}

absl::StatusOr<std::unique_ptr<ModelFile>> ReadLegacy(std::unique_ptr<MappedFile> file) {
  if (file->size() < kLegacyHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        file->path(), ": ", file->size(), " bytes is too short for a llama2.c header"));
  }
  int32_t header[7];
  std::memcpy(header, file->data(), sizeof(header));
  ModelConfig c = ConfigFromHeader(header);
  c.tied_output = header[5] > 0;
  if (absl::Status s = CheckHeader(c, file->path()); !s.ok()) return s;
  // Two unused RoPE tables (real and imaginary, [context, head_dim / 2] each) precede the
  // optional classifier.
  const int64_t rope_tables = int64_t{c.context_length} * c.head_dim;
  const int64_t expected = kLegacyHeaderBytes + (ParameterCount(c) + rope_tables) * sizeof(float);
  if (absl::Status s = CheckSize(*file, expected); !s.ok()) return s;

  auto model = std::make_unique<ModelFile>();
  model->format = "llama2.c legacy (float32)";
  model->config = c;
  ModelWeights& w = model->weights;
  w.layers.resize(c.n_layers);
  FloatCursor cursor(file->data() + kLegacyHeaderBytes);
  w.token_embedding = cursor.TakeMatrix(c.vocab_size, c.dim);
  for (auto& l : w.layers) l.attn_norm = cursor.TakeVector(c.dim);
  TakeLayerMatrices(c, cursor, w);
  for (auto& l : w.layers) l.ffn_norm = cursor.TakeVector(c.dim);
  TakeFeedForward(c, cursor, w);
  w.output_norm = cursor.TakeVector(c.dim);
  cursor.TakeVector(rope_tables);
  w.output = c.tied_output ? w.token_embedding : cursor.TakeMatrix(c.vocab_size, c.dim);
  model->mappings.push_back(std::move(file));
  return model;
}

absl::StatusOr<std::unique_ptr<ModelFile>> ReadVersioned(std::unique_ptr<MappedFile> file) {
  if (file->size() < kVersionedHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        file->path(), ": ", file->size(), " bytes is too short for a llama2.c header"));
  }
  // magic, version, 7 × int32 hyper-parameters, uint8 shared classifier, then (version 2)
  // an int32 group size, unaligned.
  int32_t version;
  std::memcpy(&version, file->data() + 4, sizeof(version));
  if (version != 1 && version != 2) {
    return absl::UnimplementedError(absl::StrCat(
        file->path(), ": llama2.c export version ", version,
        " is not supported (version 1 float32 and version 2 int8 are)"));
  }
  int32_t header[7];
  std::memcpy(header, file->data() + 8, sizeof(header));
  ModelConfig c = ConfigFromHeader(header);
  c.tied_output = file->data()[36] != 0;
  if (header[5] < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(file->path(), ": bad header: vocab_size = ", header[5], " is negative"));
  }
  if (absl::Status s = CheckHeader(c, file->path()); !s.ok()) return s;
  int32_t group_size = 0;
  std::memcpy(&group_size, file->data() + 37, sizeof(group_size));
  // Every matrix has dim as a factor of its size, so dim % group_size keeps groups whole.
  if (version == 2 && (group_size < 1 || c.dim % group_size != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        file->path(), ": bad header: group size ", group_size, " does not divide dim ", c.dim));
  }
  const int64_t norms = (2 * int64_t{c.n_layers} + 1) * c.dim;
  const int64_t matrices = ParameterCount(c) - norms;
  const int64_t expected =
      kVersionedHeaderBytes + norms * sizeof(float) +
      (version == 1 ? matrices * int64_t{sizeof(float)}
                    : matrices + matrices / group_size * int64_t{sizeof(float)});
  if (absl::Status s = CheckSize(*file, expected); !s.ok()) return s;
  if (version == 2) {  // the int8 matrices are dequantized
    if (absl::Status s = CheckConversionFits(matrices * int64_t{sizeof(float)}, file->path()); !s.ok()) {
      return s;
    }
  }

  auto model = std::make_unique<ModelFile>();
  model->format = version == 1 ? "llama2.c version 1 (float32)"
                               : absl::StrCat("llama2.c version 2 (int8, groups of ", group_size, ")");
  model->config = c;
  ModelWeights& w = model->weights;
  w.layers.resize(c.n_layers);
  // Both versions store all norms first, then the embedding, then the matrices.
  FloatCursor norm_cursor(file->data() + kVersionedHeaderBytes);
  for (auto& l : w.layers) l.attn_norm = norm_cursor.TakeVector(c.dim);
  for (auto& l : w.layers) l.ffn_norm = norm_cursor.TakeVector(c.dim);
  w.output_norm = norm_cursor.TakeVector(c.dim);
  const uint8_t* matrix_start = file->data() + kVersionedHeaderBytes + norms * sizeof(float);
  const auto take_matrices = [&](auto& cursor) {
    w.token_embedding = cursor.TakeMatrix(c.vocab_size, c.dim);
    TakeLayerMatrices(c, cursor, w);
    TakeFeedForward(c, cursor, w);
    w.output = c.tied_output ? w.token_embedding : cursor.TakeMatrix(c.vocab_size, c.dim);
  };
  if (version == 1) {
    FloatCursor cursor(matrix_start);
    take_matrices(cursor);
  } else {
    Q8GroupCursor cursor(matrix_start, group_size, *model);
    take_matrices(cursor);
  }
  model->mappings.push_back(std::move(file));
  return model;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ModelFile>> ReadLlama2c(std::unique_ptr<MappedFile> file) {
  uint32_t magic = 0;
  if (file->size() >= sizeof(magic)) std::memcpy(&magic, file->data(), sizeof(magic));
  return magic == kLlama2cMagic ? ReadVersioned(std::move(file)) : ReadLegacy(std::move(file));
}

}  // namespace toyllm
