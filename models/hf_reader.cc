#include "models/hf_reader.h"

#include <sys/stat.h>

#include <climits>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "models/safetensors_file.h"
#include "models/ggml_type.h"
#include "models/llama3_rope.h"
#include "runtime/weight_convert.h"
#include "tokenizer/tokenizer_json.h"

namespace toyllm {
namespace {

using nlohmann::json;

absl::StatusOr<json> ReadJson(const std::string& path) {
  absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  const char* text = reinterpret_cast<const char*>((*file)->data());
  json value = json::parse(text, text + (*file)->size(), nullptr, /*allow_exceptions=*/false);
  if (!value.is_object()) return absl::InvalidArgumentError(absl::StrCat(path, ": not a JSON object"));
  return value;
}

// An integer field of config.json; `fallback` when absent and fallback >= 0.
absl::StatusOr<int> IntField(const json& config, const std::string& path, const char* key,
                             int fallback = -1) {
  if (!config.contains(key) || config[key].is_null()) {
    if (fallback >= 0) return fallback;
    return absl::InvalidArgumentError(absl::StrCat(path, ": '", key, "' is missing"));
  }
  if (!config[key].is_number_integer() || config[key].get<int64_t>() < 0 ||
      config[key].get<int64_t>() > INT_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": '", key, "' is not a valid integer"));
  }
  return config[key].get<int>();
}

absl::StatusOr<float> FloatField(const json& config, const std::string& path, const char* key,
                                 float fallback) {
  if (!config.contains(key) || config[key].is_null()) return fallback;
  if (!config[key].is_number()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": '", key, "' is not a number"));
  }
  return config[key].get<float>();
}

// A boolean field of config.json; false when absent or null. (json::value() would throw
// on a value of another type.)
absl::StatusOr<bool> BoolField(const json& config, const std::string& path, const char* key) {
  if (!config.contains(key) || config[key].is_null()) return false;
  if (!config[key].is_boolean()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": '", key, "' is not true or false"));
  }
  return config[key].get<bool>();
}

// The model families toyllm reads: transformers' model_type and its class.
constexpr std::pair<const char*, const char*> kFamilies[] = {
    {"llama", "LlamaForCausalLM"}, {"qwen2", "Qwen2ForCausalLM"}, {"qwen3", "Qwen3ForCausalLM"}};

// The model_type of a supported family, or "".
std::string Family(const json& j) {
  for (auto [type, architecture] : kFamilies) {
    if (j.contains("model_type") && j["model_type"] == type) return type;
    if (j.contains("architectures") && j["architectures"].is_array() && j["architectures"].size() > 0 &&
        j["architectures"][0] == architecture) {
      return type;
    }
  }
  return "";
}

// rope_scaling {"rope_type": "llama3", factor, low_freq_factor, high_freq_factor,
// original_max_position_embeddings}, with the converter's defaults for absent fields.
absl::StatusOr<Llama3RopeScaling> ReadLlama3Scaling(const json& s, const std::string& path) {
  Llama3RopeScaling scaling;
  for (auto [key, field] : {std::pair{"factor", &scaling.factor},
                            std::pair{"low_freq_factor", &scaling.low_freq_factor},
                            std::pair{"high_freq_factor", &scaling.high_freq_factor}}) {
    absl::StatusOr<float> value = FloatField(s, path, key, *field);
    if (!value.ok()) return value.status();
    if (!(*value > 0.0f && std::isfinite(*value))) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": rope_scaling '", key, "' must be positive"));
    }
    *field = *value;
  }
  absl::StatusOr<int> context =
      IntField(s, path, "original_max_position_embeddings", scaling.original_context);
  if (!context.ok()) return context.status();
  scaling.original_context = *context;
  if (scaling.original_context < 1 || !(scaling.high_freq_factor > scaling.low_freq_factor)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": rope_scaling needs high_freq_factor > low_freq_factor and an original context > 0"));
  }
  return scaling;
}

absl::StatusOr<ModelConfig> ReadConfig(const std::string& path) {
  absl::StatusOr<json> config = ReadJson(path);
  if (!config.ok()) return config.status();
  const json& j = *config;
  const std::string family = Family(j);
  if (family.empty()) {
    return absl::UnimplementedError(absl::StrCat(
        path, ": only LlamaForCausalLM, Qwen2ForCausalLM and Qwen3ForCausalLM models are supported"));
  }
  ModelConfig c;
  for (auto [key, field] : {std::pair{"hidden_size", &c.dim},
                            std::pair{"intermediate_size", &c.hidden_dim},
                            std::pair{"num_hidden_layers", &c.n_layers},
                            std::pair{"num_attention_heads", &c.n_heads},
                            std::pair{"vocab_size", &c.vocab_size},
                            std::pair{"max_position_embeddings", &c.context_length}}) {
    absl::StatusOr<int> value = IntField(j, path, key);
    if (!value.ok()) return value.status();
    *field = *value;
  }
  absl::StatusOr<int> kv_heads = IntField(j, path, "num_key_value_heads", c.n_heads);
  if (!kv_heads.ok()) return kv_heads.status();
  c.n_kv_heads = *kv_heads;
  if (c.n_kv_heads > 0 && c.n_heads % c.n_kv_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": num_key_value_heads = ", c.n_kv_heads,
                                                   " does not divide num_attention_heads = ", c.n_heads));
  }
  absl::StatusOr<int> head_dim =
      IntField(j, path, "head_dim", c.n_heads > 0 ? c.dim / c.n_heads : 0);
  if (!head_dim.ok()) return head_dim.status();
  c.head_dim = *head_dim;
  absl::StatusOr<float> eps = FloatField(j, path, "rms_norm_eps", 1e-6f);
  if (!eps.ok()) return eps.status();
  c.norm_eps = *eps;
  // Older configs say rope_theta; transformers v5 nests it in rope_parameters.
  const json& rope = j.contains("rope_parameters") && j["rope_parameters"].is_object()
                         ? j["rope_parameters"] : j;
  absl::StatusOr<float> theta = FloatField(rope, path, "rope_theta", 10000.0f);
  if (!theta.ok()) return theta.status();
  c.rope_theta = *theta;
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    if (!j.contains(key) || !j[key].is_object()) continue;
    const json& s = j[key];
    std::string type = "default";
    for (const char* field : {"type", "rope_type"}) {  // rope_type wins
      if (!s.contains(field) || s[field].is_null()) continue;
      if (!s[field].is_string()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": '", key, "' has a '", field, "' that is not a string"));
      }
      type = s[field].get<std::string>();
    }
    if (type == "llama3") {
      absl::StatusOr<Llama3RopeScaling> scaling = ReadLlama3Scaling(s, path);
      if (!scaling.ok()) return scaling.status();
      // A corrupt head_dim is ValidateConfig's to report, not a reason to allocate.
      if (c.head_dim > 0 && c.head_dim <= c.dim) {
        c.rope_freq_factors = Llama3RopeFactors(c.rope_theta, c.head_dim, *scaling);
      }
    } else if (type == "linear") {  // every position divided by the factor: every frequency
      absl::StatusOr<float> factor = FloatField(s, path, "factor", 1.0f);
      if (!factor.ok()) return factor.status();
      if (!(*factor > 0.0f && std::isfinite(*factor))) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": rope_scaling 'factor' must be positive"));
      }
      if (c.head_dim > 0 && c.head_dim <= c.dim) c.rope_freq_factors.assign(c.head_dim / 2, *factor);
    } else if (type != "default") {
      return absl::UnimplementedError(
          absl::StrCat(path, ": RoPE scaling '", type, "' is not supported"));
    }
  }
  // Qwen 2 always has q/k/v biases (and no attention_bias key); for the others
  // attention_bias would also mean one on o_proj, which toyllm's blocks do not have.
  for (const char* key : {"attention_bias", "mlp_bias"}) {
    absl::StatusOr<bool> bias = BoolField(j, path, key);
    if (!bias.ok()) return bias.status();
    if (*bias && (family != "qwen2" || std::string(key) == "mlp_bias")) {
      return absl::UnimplementedError(absl::StrCat(path, ": attention or MLP biases are not supported"));
    }
  }
  c.qkv_bias = family == "qwen2";
  c.qk_norm = family == "qwen3";
  absl::StatusOr<bool> sliding = BoolField(j, path, "use_sliding_window");  // Qwen's, off in the releases
  if (!sliding.ok()) return sliding.status();
  if (*sliding) {
    return absl::UnimplementedError(absl::StrCat(path, ": sliding-window attention is not supported"));
  }
  absl::StatusOr<bool> tied = BoolField(j, path, "tie_word_embeddings");
  if (!tied.ok()) return tied.status();
  c.tied_output = *tied;
  // Llama's Q and K are un-permuted to adjacent pairs, as llama.cpp's converter does; Qwen's
  // stay in rotate-half order, which llama.cpp's qwen2 and qwen3 expect too.
  c.rope_layout = family == "llama" ? RopeLayout::kInterleaved : RopeLayout::kHalfSplit;
  return c;
}

// The shard files that hold the weights, relative to the directory.
absl::StatusOr<std::vector<std::string>> ShardNames(const std::string& dir) {
  const std::string index_path = dir + "/model.safetensors.index.json";
  absl::StatusOr<std::unique_ptr<MappedFile>> probe = MappedFile::Open(index_path);
  if (!probe.ok()) return std::vector<std::string>{"model.safetensors"};
  absl::StatusOr<json> index = ReadJson(index_path);
  if (!index.ok()) return index.status();
  if (!index->contains("weight_map") || !(*index)["weight_map"].is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(index_path, ": no weight_map object"));
  }
  std::set<std::string> names;
  for (const auto& [tensor, shard] : (*index)["weight_map"].items()) {
    if (!shard.is_string() || shard.get<std::string>().find('/') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(index_path, ": tensor '", tensor, "' names no shard file in the directory"));
    }
    names.insert(shard.get<std::string>());
  }
  return std::vector<std::string>(names.begin(), names.end());
}

class HfTensors {
 public:
  HfTensors(ModelFile& model, const std::string& dir) : model_(model), dir_(dir) {}

  absl::Status Open(const std::vector<std::string>& shards) {
    for (const std::string& shard : shards) {
      absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(dir_ + "/" + shard);
      if (!file.ok()) return file.status();
      absl::StatusOr<SafetensorsFile> parsed = SafetensorsFile::Parse(**file);
      if (!parsed.ok()) return parsed.status();
      for (const auto& [name, tensor] : parsed->tensors()) tensors_[name] = tensor;
      model_.mappings.push_back(*std::move(file));
    }
    return absl::OkStatus();
  }

  bool Has(const std::string& name) const { return tensors_.count(name) > 0; }

  // The bytes Floats may copy: every tensor that is not aligned float32, and Q and K,
  // which are un-permuted. Parse keeps each file's tensors apart, so this is at most
  // twice the files' size.
  int64_t ConvertedBytes() const {
    int64_t bytes = 0;
    for (const auto& [name, t] : tensors_) {
      const bool permuted = absl::EndsWith(name, "q_proj.weight") || absl::EndsWith(name, "k_proj.weight");
      const bool aligned = reinterpret_cast<uintptr_t>(t.data) % alignof(float) == 0;
      if (t.dtype == "F32" && aligned && !permuted) continue;
      int64_t n = sizeof(float);
      for (int64_t d : t.shape) n *= d;
      bytes += n;
    }
    return bytes;
  }

  // A tensor of exactly `shape` (PyTorch order) as float32; Q and K rows are un-permuted
  // when `rope_heads` > 0.
  absl::StatusOr<const float*> Floats(const std::string& name, std::vector<int64_t> shape,
                                      int rope_heads = 0) {
    const auto it = tensors_.find(name);
    if (it == tensors_.end()) {
      return absl::NotFoundError(absl::StrCat(dir_, ": tensor '", name, "' is missing"));
    }
    const SafetensorsTensor& t = it->second;
    if (t.shape != shape) {
      return absl::InvalidArgumentError(absl::StrCat(dir_, ": tensor '", name,
                                                     "' does not have the shape config.json implies"));
    }
    GgmlType type;
    if (t.dtype == "F32") type = GgmlType::kF32;
    else if (t.dtype == "F16") type = GgmlType::kF16;
    else if (t.dtype == "BF16") type = GgmlType::kBF16;
    else return absl::UnimplementedError(absl::StrCat(dir_, ": tensor '", name, "' is ", t.dtype));
    const bool aligned = reinterpret_cast<uintptr_t>(t.data) % alignof(float) == 0;
    if (type == GgmlType::kF32 && aligned && rope_heads == 0) return reinterpret_cast<const float*>(t.data);
    const int64_t n = t.bytes / (type == GgmlType::kF32 ? 4 : 2);
    std::vector<float> values(n);
    ToFloat32(type, t.data, n, values.data());
    if (rope_heads > 0) {
      const int cols = static_cast<int>(shape[1]);
      values = UnpermuteRotateHalf(values.data(), rope_heads, static_cast<int>(shape[0]) / rope_heads, cols);
    }
    return model_.converted.emplace_back(std::move(values)).data();
  }

  absl::StatusOr<Matrix> Linear(const std::string& name, int rows, int cols, int rope_heads = 0) {
    absl::StatusOr<const float*> data = Floats(name, {rows, cols}, rope_heads);
    if (!data.ok()) return data.status();
    return Matrix{*data, rows, cols};
  }

 private:
  ModelFile& model_;
  std::string dir_;
  std::map<std::string, SafetensorsTensor> tensors_;
};

absl::Status MapWeights(HfTensors& t, ModelFile& model) {
  const ModelConfig& c = model.config;
  ModelWeights& w = model.weights;
  absl::StatusOr<Matrix> embedding = t.Linear("model.embed_tokens.weight", c.vocab_size, c.dim);
  if (!embedding.ok()) return embedding.status();
  w.token_embedding = *embedding;
  w.layers.resize(c.n_layers);
  const bool unpermute = c.rope_layout == RopeLayout::kInterleaved;
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& lw = w.layers[l];
    const std::string p = absl::StrCat("model.layers.", l, ".");
    for (auto [name, norm] : {std::pair{"input_layernorm", &lw.attn_norm},
                              std::pair{"post_attention_layernorm", &lw.ffn_norm}}) {
      absl::StatusOr<const float*> v = t.Floats(p + name + ".weight", {c.dim});
      if (!v.ok()) return v.status();
      *norm = *v;
    }
    for (auto [name, m, rows, cols, heads] :
         {std::tuple{"self_attn.q_proj", &lw.wq, c.q_dim(), c.dim, unpermute ? c.n_heads : 0},
          std::tuple{"self_attn.k_proj", &lw.wk, c.kv_dim(), c.dim, unpermute ? c.n_kv_heads : 0},
          std::tuple{"self_attn.v_proj", &lw.wv, c.kv_dim(), c.dim, 0},
          std::tuple{"self_attn.o_proj", &lw.wo, c.dim, c.q_dim(), 0},
          std::tuple{"mlp.gate_proj", &lw.w1, c.hidden_dim, c.dim, 0},
          std::tuple{"mlp.down_proj", &lw.w2, c.dim, c.hidden_dim, 0},
          std::tuple{"mlp.up_proj", &lw.w3, c.hidden_dim, c.dim, 0}}) {
      absl::StatusOr<Matrix> matrix = t.Linear(p + name + ".weight", rows, cols, heads);
      if (!matrix.ok()) return matrix.status();
      *m = *matrix;
    }
    for (auto [name, vector, n, wanted] :
         {std::tuple{"self_attn.q_proj.bias", &lw.bq, c.q_dim(), c.qkv_bias},
          std::tuple{"self_attn.k_proj.bias", &lw.bk, c.kv_dim(), c.qkv_bias},
          std::tuple{"self_attn.v_proj.bias", &lw.bv, c.kv_dim(), c.qkv_bias},
          std::tuple{"self_attn.q_norm.weight", &lw.q_norm, c.head_dim, c.qk_norm},
          std::tuple{"self_attn.k_norm.weight", &lw.k_norm, c.head_dim, c.qk_norm}}) {
      if (!wanted) continue;
      absl::StatusOr<const float*> v = t.Floats(p + name, {n});
      if (!v.ok()) return v.status();
      *vector = *v;
    }
  }
  absl::StatusOr<const float*> norm = t.Floats("model.norm.weight", {c.dim});
  if (!norm.ok()) return norm.status();
  w.output_norm = *norm;
  if (model.config.tied_output) {
    w.output = w.token_embedding;
    return absl::OkStatus();
  }
  absl::StatusOr<Matrix> output = t.Linear("lm_head.weight", c.vocab_size, c.dim);
  if (!output.ok()) return output.status();
  w.output = *output;
  return absl::OkStatus();
}

}  // namespace

std::vector<float> UnpermuteRotateHalf(const float* w, int n_heads, int head_dim, int cols) {
  std::vector<float> out(static_cast<size_t>(n_heads) * head_dim * cols);
  const int half = head_dim / 2;
  for (int h = 0; h < n_heads; ++h) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < half; ++j) {
        const float* src = w + (static_cast<size_t>(h) * head_dim + i * half + j) * cols;
        float* dst = out.data() + (static_cast<size_t>(h) * head_dim + 2 * j + i) * cols;
        std::copy_n(src, cols, dst);
      }
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<ModelFile>> ReadHfDirectory(const std::string& dir) {
  absl::StatusOr<ModelConfig> config = ReadConfig(dir + "/config.json");
  if (!config.ok()) return config.status();
  if (absl::Status s = ValidateConfig(*config); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(dir, "/config.json: ", s.message()));
  }
  absl::StatusOr<std::vector<std::string>> shards = ShardNames(dir);
  if (!shards.ok()) return shards.status();

  auto model = std::make_unique<ModelFile>();
  model->format = absl::StrCat("Hugging Face safetensors (", shards->size(), " file",
                               shards->size() == 1 ? "" : "s", ")");
  model->config = *config;
  HfTensors tensors(*model, dir);
  if (absl::Status s = tensors.Open(*shards); !s.ok()) return s;
  // Some checkpoints store lm_head although config.json says tied; then it is used.
  if (model->config.tied_output && tensors.Has("lm_head.weight")) model->config.tied_output = false;
  if (absl::Status s = CheckConversionFits(tensors.ConvertedBytes(), dir); !s.ok()) return s;
  if (absl::Status s = MapWeights(tensors, *model); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<MappedFile>> tokenizer = MappedFile::Open(dir + "/tokenizer.model");
  if (tokenizer.ok()) {
    model->vocabulary = SentencePieceVocabulary(
        std::string(reinterpret_cast<const char*>((*tokenizer)->data()), (*tokenizer)->size()));
  } else if (struct stat st; stat((dir + "/tokenizer.json").c_str(), &st) == 0) {
    absl::StatusOr<Vocabulary> vocabulary = ReadTokenizerJson(dir + "/tokenizer.json");
    if (!vocabulary.ok()) return vocabulary.status();
    PadVocabulary(model->config.vocab_size, *vocabulary);
    model->vocabulary = *std::move(vocabulary);
  }
  return model;
}

}  // namespace toyllm
