#include "tests/fuzz/tiny_model.h"

#include <cstring>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "models/llama2c_reader.h"
#include "models/ggml_type.h"
#include "runtime/weight_convert.h"
#include "tokenizer/sentencepiece_proto.h"
#include "tokenizer/tokenizer.h"

namespace toyllm::fuzz {
namespace {

template <typename T>
void Append(const T& value, std::string* out) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(value));
}

void AppendFloats(const float* data, int64_t n, std::string* out) {
  out->append(reinterpret_cast<const char*>(data), n * sizeof(float));
}

void AppendMatrix(const Matrix& m, std::string* out) { AppendFloats(m.floats(), int64_t{m.rows} * m.cols, out); }

// llama2.c export.py's version 2: per matrix, the int8 values, then one float32 scale per
// group (the group's largest magnitude / 127).
void AppendQ8Matrix(const Matrix& m, int group_size, std::string* out) {
  const int64_t n = int64_t{m.rows} * m.cols;
  std::vector<float> scales;
  std::string q;
  for (int64_t g = 0; g < n / group_size; ++g) {
    float max = 0.0f;
    for (int64_t i = g * group_size; i < (g + 1) * group_size; ++i) max = std::max(max, std::abs(m.floats()[i]));
    const float scale = max / 127.0f;
    for (int64_t i = g * group_size; i < (g + 1) * group_size; ++i) {
      q.push_back(static_cast<char>(scale == 0.0f ? 0 : std::lround(m.floats()[i] / scale)));
    }
    scales.push_back(scale);
  }
  out->append(q);
  AppendFloats(scales.data(), static_cast<int64_t>(scales.size()), out);
}

}  // namespace

TinyModel MakeTinyModel(bool tied, int dim, int hidden) {
  TinyModel m;
  ModelConfig& c = m.config;
  c.dim = dim;
  c.hidden_dim = hidden;
  c.n_layers = 1;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.head_dim = dim / 2;
  c.vocab_size = 16;
  c.context_length = 8;
  c.tied_output = tied;
  uint32_t state = 0x2545F491;
  const auto values = [&](int64_t n) {
    std::vector<float>& v = m.storage.emplace_back(n);
    for (float& x : v) {  // xorshift32
      state ^= state << 13;
      state ^= state >> 17;
      state ^= state << 5;
      x = static_cast<float>(state >> 8) / (1 << 24) - 0.5f;
    }
    return v.data();
  };
  const auto matrix = [&](int rows, int cols) { return Matrix{values(int64_t{rows} * cols), rows, cols}; };
  ModelWeights& w = m.weights;
  w.token_embedding = matrix(c.vocab_size, c.dim);
  w.layers.resize(c.n_layers);
  for (LayerWeights& l : w.layers) {
    l.attn_norm = values(c.dim);
    l.wq = matrix(c.q_dim(), c.dim);
    l.wk = matrix(c.kv_dim(), c.dim);
    l.wv = matrix(c.kv_dim(), c.dim);
    l.wo = matrix(c.dim, c.q_dim());
    l.ffn_norm = values(c.dim);
    l.w1 = matrix(c.hidden_dim, c.dim);
    l.w2 = matrix(c.dim, c.hidden_dim);
    l.w3 = matrix(c.hidden_dim, c.dim);
  }
  w.output_norm = values(c.dim);
  w.output = tied ? w.token_embedding : matrix(c.vocab_size, c.dim);
  return m;
}

std::string TinyVocabulary() {
  VocabularyArrays v;
  v.pieces = {"<unk>", "<s>", "</s>", "\xe2\x96\x81", "\xe2\x96\x81t", "on", "ce", "up",
              "O", "n", "c", "e", "u", "p", "t", "a"};
  for (size_t i = 0; i < v.pieces.size(); ++i) {
    v.scores.push_back(-static_cast<float>(i));
    v.types.push_back(static_cast<int32_t>(i == 0 ? TokenType::kUnknown
                                           : i < 3 ? TokenType::kControl
                                                   : TokenType::kNormal));
  }
  v.byte_fallback = false;
  return BuildSentencePieceModel(v);
}

std::string Llama2cFile(const TinyModel& model, int version, int group_size) {
  const ModelConfig& c = model.config;
  const ModelWeights& w = model.weights;
  std::string out;
  const int32_t vocab = version == 0 && !c.tied_output ? -c.vocab_size : c.vocab_size;
  const int32_t header[7] = {c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, vocab,
                             c.context_length};
  if (version == 0) {
    out.append(reinterpret_cast<const char*>(header), sizeof(header));
    AppendMatrix(w.token_embedding, &out);
    for (const LayerWeights& l : w.layers) AppendFloats(l.attn_norm, c.dim, &out);
    for (auto m : {&LayerWeights::wq, &LayerWeights::wk, &LayerWeights::wv, &LayerWeights::wo}) {
      for (const LayerWeights& l : w.layers) AppendMatrix(l.*m, &out);
    }
    for (const LayerWeights& l : w.layers) AppendFloats(l.ffn_norm, c.dim, &out);
    for (auto m : {&LayerWeights::w1, &LayerWeights::w2, &LayerWeights::w3}) {
      for (const LayerWeights& l : w.layers) AppendMatrix(l.*m, &out);
    }
    AppendFloats(w.output_norm, c.dim, &out);
    out.append(int64_t{c.context_length} * c.head_dim * sizeof(float), '\0');  // RoPE tables
    if (!c.tied_output) AppendMatrix(w.output, &out);
    return out;
  }
  Append(kLlama2cMagic, &out);
  Append(int32_t{version}, &out);
  out.append(reinterpret_cast<const char*>(header), sizeof(header));
  out.push_back(c.tied_output ? 1 : 0);
  if (version == 2) Append(int32_t{group_size}, &out);
  out.resize(256, '\0');
  for (const LayerWeights& l : w.layers) AppendFloats(l.attn_norm, c.dim, &out);
  for (const LayerWeights& l : w.layers) AppendFloats(l.ffn_norm, c.dim, &out);
  AppendFloats(w.output_norm, c.dim, &out);
  const auto matrix = [&](const Matrix& m) {
    if (version == 1) AppendMatrix(m, &out);
    else AppendQ8Matrix(m, group_size, &out);
  };
  matrix(w.token_embedding);
  for (auto m : {&LayerWeights::wq, &LayerWeights::wk, &LayerWeights::wv, &LayerWeights::wo,
                 &LayerWeights::w1, &LayerWeights::w2, &LayerWeights::w3}) {
    for (const LayerWeights& l : w.layers) matrix(l.*m);
  }
  if (!c.tied_output) matrix(w.output);
  return out;
}

std::string SafetensorsFile(const std::vector<NamedTensor>& tensors, const std::string& dtype) {
  const GgmlType type = dtype == "F16" ? GgmlType::kF16 : dtype == "BF16" ? GgmlType::kBF16 : GgmlType::kF32;
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::string buffer;
  for (const NamedTensor& t : tensors) {
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    const size_t begin = buffer.size();
    FromFloat32(type, t.data, n, &buffer);
    header[t.name] = {{"dtype", dtype}, {"shape", t.shape}, {"data_offsets", {begin, buffer.size()}}};
  }
  std::string text = header.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');  // the reference writer aligns the buffer to 8
  std::string out;
  Append(static_cast<uint64_t>(text.size()), &out);
  return out + text + buffer;
}

std::string HfSafetensors(const TinyModel& model, const std::string& dtype) {
  const ModelConfig& c = model.config;
  const ModelWeights& w = model.weights;
  const auto matrix = [](std::string name, const Matrix& m) {
    return NamedTensor{std::move(name), {m.rows, m.cols}, m.floats()};
  };
  std::vector<NamedTensor> tensors = {matrix("model.embed_tokens.weight", w.token_embedding),
                                      {"model.norm.weight", {c.dim}, w.output_norm}};
  if (!c.tied_output) tensors.push_back(matrix("lm_head.weight", w.output));
  for (int i = 0; i < c.n_layers; ++i) {
    const LayerWeights& l = w.layers[i];
    const std::string p = absl::StrCat("model.layers.", i, ".");
    tensors.push_back({p + "input_layernorm.weight", {c.dim}, l.attn_norm});
    tensors.push_back({p + "post_attention_layernorm.weight", {c.dim}, l.ffn_norm});
    for (auto [name, m] : {std::pair{"self_attn.q_proj", &l.wq}, std::pair{"self_attn.k_proj", &l.wk},
                           std::pair{"self_attn.v_proj", &l.wv}, std::pair{"self_attn.o_proj", &l.wo},
                           std::pair{"mlp.gate_proj", &l.w1}, std::pair{"mlp.down_proj", &l.w2},
                           std::pair{"mlp.up_proj", &l.w3}}) {
      tensors.push_back(matrix(p + name + ".weight", *m));
    }
  }
  return SafetensorsFile(tensors, dtype);
}

std::string HfConfigJson(const ModelConfig& c) {
  const nlohmann::json config = {
      {"architectures", {"LlamaForCausalLM"}},
      {"model_type", "llama"},
      {"hidden_size", c.dim},
      {"intermediate_size", c.hidden_dim},
      {"num_hidden_layers", c.n_layers},
      {"num_attention_heads", c.n_heads},
      {"num_key_value_heads", c.n_kv_heads},
      {"vocab_size", c.vocab_size},
      {"max_position_embeddings", c.context_length},
      {"rms_norm_eps", 1e-5},
      {"rope_theta", 10000.0},
      {"tie_word_embeddings", c.tied_output},
      {"torch_dtype", "float32"},
  };
  return config.dump(2) + "\n";
}

}  // namespace toyllm::fuzz
