#include "models/llama_gguf_export.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "models/gguf_reader.h"
#include "runtime/weight_convert.h"

namespace toyllm {
namespace {

void AddTokenizer(const Tokenizer& tokenizer, GgufWriter& w) {
  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::vector<int32_t> types;
  for (int id = 0; id < tokenizer.vocab_size(); ++id) {
    pieces.push_back(tokenizer.Piece(id));
    scores.push_back(tokenizer.Score(id));
    types.push_back(static_cast<int32_t>(tokenizer.Type(id)));
  }
  w.AddString("tokenizer.ggml.model", "llama");
  w.AddStringArray("tokenizer.ggml.tokens", pieces);
  w.AddFloat32Array("tokenizer.ggml.scores", scores);
  w.AddInt32Array("tokenizer.ggml.token_type", types);
  for (auto [key, id] : {std::pair{"bos_token_id", tokenizer.bos_id()},
                         std::pair{"eos_token_id", tokenizer.eos_id()},
                         std::pair{"unknown_token_id", tokenizer.unk_id()}}) {
    if (id >= 0) w.AddUint32(absl::StrCat("tokenizer.ggml.", key), id);
  }
  w.AddBool("tokenizer.ggml.add_bos_token", true);
  w.AddBool("tokenizer.ggml.add_eos_token", false);
  w.AddUint8Array(kSentencePieceModelKey, tokenizer.Serialized());
}

}  // namespace

absl::Status WriteLlamaGguf(const std::string& path, const ModelConfig& c,
                            const ModelWeights& weights, const ExportOptions& options) {
  if (c.rope_layout == RopeLayout::kHalfSplit) {
    return absl::InvalidArgumentError("GGUF llama models use interleaved RoPE; un-permute Q and K first");
  }
  GgufWriter w;
  w.AddString("general.architecture", "llama");
  w.AddString("general.name", options.name.empty() ? "toyllm" : options.name);
  w.AddUint32("general.alignment", 32);
  const QuantPreset preset{options.type, options.mix};
  w.AddUint32("general.file_type", FileType(preset));
  if (IsBlockQuantized(options.type)) w.AddUint32("general.quantization_version", 2);
  w.AddUint32("llama.context_length", c.context_length);
  w.AddUint32("llama.embedding_length", c.dim);
  w.AddUint32("llama.block_count", c.n_layers);
  w.AddUint32("llama.feed_forward_length", c.hidden_dim);
  w.AddUint32("llama.attention.head_count", c.n_heads);
  w.AddUint32("llama.attention.head_count_kv", c.n_kv_heads);
  w.AddUint32("llama.rope.dimension_count", c.rope_layout == RopeLayout::kNone ? 0 : c.head_dim);
  if (c.norm == NormKind::kNone) w.AddString(kNormKey, "none");
  w.AddFloat32("llama.rope.freq_base", c.rope_theta);
  w.AddFloat32("llama.attention.layer_norm_rms_epsilon", c.norm_eps);
  w.AddUint32("llama.vocab_size", c.vocab_size);
  if (c.head_dim * c.n_heads != c.dim) {
    w.AddUint32("llama.attention.key_length", c.head_dim);
    w.AddUint32("llama.attention.value_length", c.head_dim);
  }
  if (options.tokenizer != nullptr) AddTokenizer(*options.tokenizer, w);

  const auto add_vector = [&w, &options](const std::string& name, const float* data, int n) {
    w.AddTensor(name, {n}, GgmlType::kF32, [&options, name, data, n](std::string* out) {
      FromFloat32(GgmlType::kF32, options.values ? options.values(name, n) : data, n, out);
    });
  };
  const auto add_matrix = [&w, &options, &c, &preset](const std::string& name, const Matrix& m,
                                                      int layer = -1) {
    const bool is_output = name == "output.weight" || (c.tied_output && name == "token_embd.weight");
    const int n_gqa = c.n_kv_heads > 0 ? c.n_heads / c.n_kv_heads : 1;
    const GgmlType type = PresetTensorType(preset, {name, m.cols, layer, c.n_layers, n_gqa, is_output});
    w.AddTensor(name, {m.cols, m.rows}, type, [&options, name, m, type](std::string* out) {
      if (options.values) {  // a generated model: the views give only the shape
        const int64_t n = int64_t{m.rows} * m.cols;
        FromFloat32(type, options.values(name, n), n, out);
        return;
      }
      if (m.type == type) {  // already stored so: copy the bytes, never re-quantise
        out->append(static_cast<const char*>(m.data), m.rows * m.row_bytes());
        return;
      }
      std::vector<float> row(m.cols);
      for (int r = 0; r < m.rows; ++r) {
        ToFloat32(m.type, m.row(r), m.cols, row.data());
        FromFloat32(type, row.data(), m.cols, out);
      }
    });
  };
  add_matrix("token_embd.weight", weights.token_embedding);
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = weights.layers[l];
    const std::string b = absl::StrCat("blk.", l, ".");
    if (c.norm != NormKind::kNone) add_vector(b + "attn_norm.weight", lw.attn_norm, c.dim);
    add_matrix(b + "attn_q.weight", lw.wq, l);
    add_matrix(b + "attn_k.weight", lw.wk, l);
    add_matrix(b + "attn_v.weight", lw.wv, l);
    add_matrix(b + "attn_output.weight", lw.wo, l);
    if (c.hidden_dim == 0) continue;  // no feed-forward layer
    if (c.norm != NormKind::kNone) add_vector(b + "ffn_norm.weight", lw.ffn_norm, c.dim);
    add_matrix(b + "ffn_gate.weight", lw.w1, l);
    add_matrix(b + "ffn_down.weight", lw.w2, l);
    add_matrix(b + "ffn_up.weight", lw.w3, l);
  }
  if (c.norm != NormKind::kNone) add_vector("output_norm.weight", weights.output_norm, c.dim);
  if (!c.tied_output) add_matrix("output.weight", weights.output);
  return w.Write(path, options.progress);
}

}  // namespace toyllm
