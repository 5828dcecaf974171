#include "models/llama2c_reader.h"

#include <climits>
#include <cstdlib>
#include <cstring>

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
void TakeLayerMatrices(const ModelConfig& c, FloatCursor& cursor, ModelWeights& w) {
  for (auto& l : w.layers) l.wq = cursor.TakeMatrix(c.q_dim(), c.dim);
  for (auto& l : w.layers) l.wk = cursor.TakeMatrix(c.kv_dim(), c.dim);
  for (auto& l : w.layers) l.wv = cursor.TakeMatrix(c.kv_dim(), c.dim);
  for (auto& l : w.layers) l.wo = cursor.TakeMatrix(c.dim, c.q_dim());
}

void TakeFeedForward(const ModelConfig& c, FloatCursor& cursor, ModelWeights& w) {
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
  model->mapping = std::move(file);
  return model;
}

absl::StatusOr<std::unique_ptr<ModelFile>> ReadVersioned(std::unique_ptr<MappedFile> file) {
  if (file->size() < kVersionedHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        file->path(), ": ", file->size(), " bytes is too short for a llama2.c header"));
  }
  int32_t version;
  std::memcpy(&version, file->data() + 4, sizeof(version));
  if (version != 1) {
    return absl::UnimplementedError(absl::StrCat(
        file->path(), ": llama2.c export version ", version,
        " is not supported (only version 1, float32)"));
  }
  int32_t header[7];
  std::memcpy(header, file->data() + 8, sizeof(header));
  ModelConfig c = ConfigFromHeader(header);
  c.tied_output = file->data()[8 + sizeof(header)] != 0;
  if (header[5] < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(file->path(), ": bad header: vocab_size = ", header[5], " is negative"));
  }
  if (absl::Status s = CheckHeader(c, file->path()); !s.ok()) return s;
  const int64_t expected = kVersionedHeaderBytes + ParameterCount(c) * sizeof(float);
  if (absl::Status s = CheckSize(*file, expected); !s.ok()) return s;

  auto model = std::make_unique<ModelFile>();
  model->format = "llama2.c version 1 (float32)";
  model->config = c;
  ModelWeights& w = model->weights;
  w.layers.resize(c.n_layers);
  // Version 1 stores all norms first, then the embedding, then the matrices.
  FloatCursor cursor(file->data() + kVersionedHeaderBytes);
  for (auto& l : w.layers) l.attn_norm = cursor.TakeVector(c.dim);
  for (auto& l : w.layers) l.ffn_norm = cursor.TakeVector(c.dim);
  w.output_norm = cursor.TakeVector(c.dim);
  w.token_embedding = cursor.TakeMatrix(c.vocab_size, c.dim);
  TakeLayerMatrices(c, cursor, w);
  TakeFeedForward(c, cursor, w);
  w.output = c.tied_output ? w.token_embedding : cursor.TakeMatrix(c.vocab_size, c.dim);
  model->mapping = std::move(file);
  return model;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ModelFile>> ReadLlama2c(std::unique_ptr<MappedFile> file) {
  uint32_t magic = 0;
  if (file->size() >= sizeof(magic)) std::memcpy(&magic, file->data(), sizeof(magic));
  return magic == kLlama2cMagic ? ReadVersioned(std::move(file)) : ReadLegacy(std::move(file));
}

}  // namespace toyllm
