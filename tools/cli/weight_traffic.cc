#include "tools/cli/weight_traffic.h"

#include "absl/strings/match.h"
#include "models/ggml_type.h"

namespace toyllm {
namespace {

constexpr char kEmbeddingName[] = "token_embd.weight";

// Bytes of a listed tensor, from its type's block size; 0 for a type toyllm cannot read.
int64_t StoredBytes(const ModelFile::Tensor& t) {
  int64_t elements = 1;
  for (int64_t d : t.dims) elements *= d;
  for (uint32_t id = 0; id <= kMaxGgmlTypeId; ++id) {
    GgmlTypeTraits traits;
    if (!LookUpGgmlType(id, &traits) || traits.name != t.type) continue;
    return elements / traits.block_elements * traits.block_bytes;
  }
  return 0;
}

int64_t Floats(const Matrix& m) { return int64_t{m.rows} * m.cols; }

}  // namespace

int64_t WeightBytesPerToken(const ModelFile& model) {
  const bool tied = model.config.tied_output;
  if (model.tensors.empty()) {
    int64_t floats = Floats(model.weights.output) + (tied ? 0 : model.config.dim);
    for (const LayerWeights& l : model.weights.layers) {
      for (const Matrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3}) floats += Floats(*m);
    }
    return floats * static_cast<int64_t>(sizeof(float));
  }
  int64_t bytes = 0;
  for (const ModelFile::Tensor& t : model.tensors) {
    if (t.dims.size() != 2) continue;  // norms
    const bool embedding = t.name == kEmbeddingName;
    bytes += embedding && !tied ? StoredBytes(t) / t.dims[1] : StoredBytes(t);
  }
  return bytes;
}

std::string LayerWeightType(const ModelFile& model) {
  for (const ModelFile::Tensor& t : model.tensors) {
    if (absl::StartsWith(t.name, "blk.") && t.dims.size() == 2) return t.type;
  }
  return "f32";
}

}  // namespace toyllm
