#include "models/llama_gguf_export.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "models/gguf_reader.h"
#include "runtime/weight_convert.h"

namespace toyllm {

// llama.cpp's tokenizer keys: SentencePiece ("llama") with scores, plus the exact
// ModelProto; byte-level BPE ("gpt2") with merges and the pre-tokenizer's name.
void AddTokenizerKeys(const Tokenizer& tokenizer, GgufWriter& w) {
  const Vocabulary& v = tokenizer.vocabulary();
  std::vector<int32_t> types;
  for (int id = 0; id < tokenizer.vocab_size(); ++id) types.push_back(static_cast<int32_t>(tokenizer.Type(id)));
  w.AddString("tokenizer.ggml.model", v.model);
  w.AddStringArray("tokenizer.ggml.tokens", v.tokens);
  if (v.model == "llama") {
    std::vector<float> scores;
    for (int id = 0; id < tokenizer.vocab_size(); ++id) scores.push_back(tokenizer.Score(id));
    w.AddFloat32Array("tokenizer.ggml.scores", scores);
  }
  w.AddInt32Array("tokenizer.ggml.token_type", types);
  if (v.model == "gpt2") {
    w.AddStringArray("tokenizer.ggml.merges", v.merges);
    if (!v.pre.empty()) w.AddString("tokenizer.ggml.pre", v.pre);
    if (!v.pre_regexes.empty()) w.AddStringArray(kPreRegexesKey, v.pre_regexes);
  }
  for (auto [key, id] : {std::pair{"bos_token_id", v.bos_id}, std::pair{"eos_token_id", v.eos_id},
                         std::pair{"eot_token_id", v.eot_id}, std::pair{"unknown_token_id", v.unk_id},
                         std::pair{"padding_token_id", v.pad_id}}) {
    if (id >= 0) w.AddUint32(absl::StrCat("tokenizer.ggml.", key), id);
  }
  w.AddBool("tokenizer.ggml.add_bos_token", tokenizer.add_bos());
  w.AddBool("tokenizer.ggml.add_eos_token", false);
  if (v.model == "llama") w.AddUint8Array(kSentencePieceModelKey, v.sentencepiece_model);
}

absl::StatusOr<std::string> GgufArchitecture(const ModelConfig& c) {
  // llama.cpp rotates Qwen's heads in halves ("neox") and Llama's in adjacent pairs.
  if (c.qk_norm) {
    if (c.rope_layout != RopeLayout::kHalfSplit || c.qkv_bias) {
      return absl::InvalidArgumentError(
          "GGUF qwen3 models have half-split RoPE and no q/k/v biases");
    }
    return std::string("qwen3");
  }
  if (c.rope_layout == RopeLayout::kHalfSplit) {
    if (!c.qkv_bias) {
      return absl::InvalidArgumentError(
          "GGUF llama models use interleaved RoPE; un-permute Q and K first");
    }
    return std::string("qwen2");
  }
  return std::string("llama");  // biases, where present, are optional tensors of llama
}

absl::Status WriteLlamaGguf(const std::string& path, const ModelConfig& c,
                            const ModelWeights& weights, const ExportOptions& options) {
  absl::StatusOr<std::string> arch = GgufArchitecture(c);
  if (!arch.ok()) return arch.status();
  const std::string p = *arch + ".";
  GgufWriter w;
  w.AddString("general.architecture", *arch);
  w.AddString("general.name", options.name.empty() ? "toyllm" : options.name);
  w.AddUint32("general.alignment", 32);
  const QuantPreset preset{options.type, options.mix};
  w.AddUint32("general.file_type", FileType(preset));
  if (IsBlockQuantized(options.type)) w.AddUint32("general.quantization_version", 2);
  w.AddUint32(p + "context_length", c.context_length);
  w.AddUint32(p + "embedding_length", c.dim);
  w.AddUint32(p + "block_count", c.n_layers);
  w.AddUint32(p + "feed_forward_length", c.hidden_dim);
  w.AddUint32(p + "attention.head_count", c.n_heads);
  w.AddUint32(p + "attention.head_count_kv", c.n_kv_heads);
  w.AddUint32(p + "rope.dimension_count", c.rope_layout == RopeLayout::kNone ? 0 : c.head_dim);
  if (c.norm == NormKind::kNone) w.AddString(kNormKey, "none");
  w.AddFloat32(p + "rope.freq_base", c.rope_theta);
  w.AddFloat32(p + "attention.layer_norm_rms_epsilon", c.norm_eps);
  // The converter writes it for llama; without a tokenizer llama.cpp needs it to size its
  // vocabulary, for any architecture.
  if (*arch == "llama" || options.tokenizer == nullptr) w.AddUint32(p + "vocab_size", c.vocab_size);
  if (c.head_dim * c.n_heads != c.dim) {
    w.AddUint32(p + "attention.key_length", c.head_dim);
    w.AddUint32(p + "attention.value_length", c.head_dim);
  }
  // Without one (a --random model), llama.cpp's "none" tokenizer: it then opens the file
  // with vocab_size placeholder tokens, so llama-bench runs it as written.
  if (options.tokenizer != nullptr) {
    AddTokenizerKeys(*options.tokenizer, w);
  } else {
    w.AddString("tokenizer.ggml.model", "none");
  }
  if (!options.chat_template.empty()) w.AddString("tokenizer.chat_template", options.chat_template);

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
  if (!c.rope_freq_factors.empty()) {  // part of the config: never generated values
    const std::vector<float>& f = c.rope_freq_factors;
    w.AddTensor("rope_freqs.weight", {static_cast<int64_t>(f.size())}, GgmlType::kF32,
                [&f](std::string* out) { FromFloat32(GgmlType::kF32, f.data(), f.size(), out); });
  }
  add_matrix("token_embd.weight", weights.token_embedding);
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = weights.layers[l];
    const std::string b = absl::StrCat("blk.", l, ".");
    if (c.norm != NormKind::kNone) add_vector(b + "attn_norm.weight", lw.attn_norm, c.dim);
    add_matrix(b + "attn_q.weight", lw.wq, l);
    add_matrix(b + "attn_k.weight", lw.wk, l);
    add_matrix(b + "attn_v.weight", lw.wv, l);
    if (c.qkv_bias) {
      add_vector(b + "attn_q.bias", lw.bq, c.q_dim());
      add_vector(b + "attn_k.bias", lw.bk, c.kv_dim());
      add_vector(b + "attn_v.bias", lw.bv, c.kv_dim());
    }
    if (c.qk_norm) {
      add_vector(b + "attn_q_norm.weight", lw.q_norm, c.head_dim);
      add_vector(b + "attn_k_norm.weight", lw.k_norm, c.head_dim);
    }
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
