// Writes the fuzzers' generated seeds: the tiny random model (tiny_model.h) in every
// format, the tokenizer, and a few argument lists and shapes, one folder per harness.
// scripts/fuzz.sh runs it into the build directory; nothing it writes is committed.
// Usage: make_seeds OUT_DIR
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/llama_gguf_export.h"
#include "tests/fuzz/tiny_model.h"
#include "tokenizer/load_tokenizer.h"

namespace toyllm::fuzz {
namespace {

std::string out_dir;
bool failed = false;

void Write(const std::string& relative, const std::string& bytes) {
  const std::string path = out_dir + "/" + relative;
  mkdir(path.substr(0, path.rfind('/')).c_str(), 0755);
  std::ofstream(path, std::ios::binary) << bytes;
}

void WriteGguf(const std::string& name, const TinyModel& model, GgmlType type,
               QuantMix mix = QuantMix::kNone) {
  mkdir((out_dir + "/gguf").c_str(), 0755);
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadSentencePieceModel(TinyVocabulary(), "tiny");
  ExportOptions options;
  options.type = type;
  options.mix = mix;
  options.name = "tiny";
  options.tokenizer = tokenizer.ok() ? tokenizer->get() : nullptr;
  absl::Status s = tokenizer.status();
  if (s.ok()) s = WriteLlamaGguf(out_dir + "/gguf/" + name, model.config, model.weights, options);
  if (!s.ok()) {
    std::cerr << name << ": " << s.message() << "\n";
    failed = true;
  }
}

// `model` with what a family adds: q/k/v biases and half-split RoPE (qwen2), per-head q/k
// norms (qwen3) or RoPE frequency factors (llama with Llama 3.1's rope_freqs).
TinyModel WithFamily(TinyModel model, const std::string& family) {
  ModelConfig& c = model.config;
  const auto values = [&model](int n, float value) {
    return model.storage.emplace_back(n, value).data();  // inner buffers survive the outer's growth
  };
  for (LayerWeights& l : model.weights.layers) {
    if (family == "qwen2") {
      l.bq = values(c.q_dim(), 0.25f);
      l.bk = values(c.kv_dim(), -0.25f);
      l.bv = values(c.kv_dim(), 0.5f);
    } else if (family == "qwen3") {
      l.q_norm = values(c.head_dim, 1.5f);
      l.k_norm = values(c.head_dim, 0.75f);
    }
  }
  c.qkv_bias = family == "qwen2";
  c.qk_norm = family == "qwen3";
  if (family != "llama") c.rope_layout = RopeLayout::kHalfSplit;
  if (family == "llama") c.rope_freq_factors.assign(c.head_dim / 2, 2.0f);
  return model;
}

// model.safetensors.index.json naming one shard for every tensor.
std::string Index(const TinyModel& model) {
  nlohmann::json map = nlohmann::json::object();
  const std::string file = HfSafetensors(model);
  uint64_t header_bytes;
  std::memcpy(&header_bytes, file.data(), sizeof(header_bytes));
  const nlohmann::json header = nlohmann::json::parse(file.substr(8, header_bytes));
  for (const auto& [name, value] : header.items()) {
    if (name != "__metadata__") map[name] = "model.safetensors";
  }
  return nlohmann::json{{"metadata", {{"total_size", 0}}}, {"weight_map", map}}.dump(1);
}

std::string Args(const std::vector<std::string>& args, bool positionals) {
  std::string out(1, positionals ? '\1' : '\0');
  for (size_t i = 0; i < args.size(); ++i) out += (i > 0 ? std::string(1, '\0') : "") + args[i];
  return out;
}

int Run() {
  mkdir(out_dir.c_str(), 0755);
  const TinyModel untied = MakeTinyModel(/*tied=*/false), tied = MakeTinyModel(/*tied=*/true);
  const TinyModel wide = MakeTinyModel(/*tied=*/false, /*dim=*/32, /*hidden=*/32);  // whole q8_0 blocks
  WriteGguf("tiny_f32.gguf", untied, GgmlType::kF32);
  WriteGguf("tiny_tied_f16.gguf", tied, GgmlType::kF16);
  WriteGguf("tiny_bf16.gguf", untied, GgmlType::kBF16);
  WriteGguf("wide_q8_0.gguf", wide, GgmlType::kQ8_0);
  WriteGguf("tiny_qwen2_f32.gguf", WithFamily(tied, "qwen2"), GgmlType::kF32);
  WriteGguf("tiny_qwen3_f16.gguf", WithFamily(untied, "qwen3"), GgmlType::kF16);
  WriteGguf("tiny_llama31_f32.gguf", WithFamily(untied, "llama"), GgmlType::kF32);
  // Every other block type: the legacy ones on 32-wide rows, the K-quants on 256-wide.
  WriteGguf("wide_q4_0.gguf", wide, GgmlType::kQ4_0);
  WriteGguf("wide_q4_1.gguf", wide, GgmlType::kQ4_1);
  WriteGguf("wide_q5_0.gguf", wide, GgmlType::kQ5_0);
  WriteGguf("wide_q5_1.gguf", wide, GgmlType::kQ5_1);
  WriteGguf("wide_iq4_nl.gguf", wide, GgmlType::kIQ4_NL);
  const TinyModel k_wide = MakeTinyModel(/*tied=*/false, /*dim=*/256, /*hidden=*/256);
  WriteGguf("k_wide_q2_k.gguf", k_wide, GgmlType::kQ2_K);
  WriteGguf("k_wide_q3_k_m.gguf", k_wide, GgmlType::kQ3_K, QuantMix::kMedium);
  WriteGguf("k_wide_q4_k_m.gguf", k_wide, GgmlType::kQ4_K, QuantMix::kMedium);
  WriteGguf("k_wide_q5_k_s.gguf", k_wide, GgmlType::kQ5_K, QuantMix::kSmall);
  WriteGguf("k_wide_q6_k.gguf", k_wide, GgmlType::kQ6_K);

  Write("llama2c/legacy_untied.bin", Llama2cFile(untied, 0));
  Write("llama2c/legacy_tied.bin", Llama2cFile(tied, 0));
  Write("llama2c/v1_untied.bin", Llama2cFile(untied, 1));
  Write("llama2c/v2_tied.bin", Llama2cFile(tied, 2, /*group_size=*/4));
  Write("llama2c/v2_untied.bin", Llama2cFile(untied, 2, /*group_size=*/8));

  Write("safetensors/tiny_f32.safetensors", HfSafetensors(untied, "F32"));
  Write("safetensors/tiny_tied_f16.safetensors", HfSafetensors(tied, "F16"));
  Write("safetensors/tiny_bf16.safetensors", HfSafetensors(untied, "BF16"));

  // hf_config_fuzzer's fixed model.safetensors is `untied`: these configs fit it.
  ModelConfig tied_config = untied.config;
  tied_config.tied_output = true;  // lm_head is present, so it is used anyway
  Write("hf_config/config.json", HfConfigJson(untied.config));
  Write("hf_config/config_tied.json", HfConfigJson(tied_config));
  Write("hf_config/config_and_index.json", HfConfigJson(untied.config) + '\0' + Index(untied));
  // The other families' keys, on the same fixed weights (which lack their tensors).
  nlohmann::json config = nlohmann::json::parse(HfConfigJson(untied.config));
  config["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                            {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8}};
  Write("hf_config/config_llama3.json", config.dump(1));
  config.erase("rope_scaling");
  for (const char* family : {"qwen2", "qwen3"}) {
    config["model_type"] = family;
    config["architectures"] = {std::string(family) == "qwen2" ? "Qwen2ForCausalLM" : "Qwen3ForCausalLM"};
    Write(std::string("hf_config/config_") + family + ".json", config.dump(1));
  }

  Write("tokenizer/tiny.model", TinyVocabulary());

  Write("npy/scalar", std::string(1, '\0'));
  Write("npy/vector", std::string("\1\5abcde", 7));
  Write("npy/matrix", std::string("\2\3\4", 3) + std::string(12, 'x'));
  Write("npy/empty_axis", std::string("\3\2\0\7", 4));
  Write("npy/rank32", std::string(1, '\40') + std::string(32, '\1') + "z");

  Write("args/model_prompt", Args({"-m", "model.gguf", "-p", "Once upon a time", "-n", "5"}, false));
  Write("args/equals", Args({"--model=m.bin", "--temp=0.8", "--seed=42", "-t", "2"}, false));
  Write("args/bool_and_help", Args({"-v", "--help", "--verbose"}, false));
  Write("args/positionals", Args({"in.bin", "-m", "x", "out.gguf", "--", "-"}, true));
  Write("args/bad_values", Args({"-n", "many", "--temp", "nan", "--seed", "-1", "--verbose=1"}, false));
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace toyllm::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_seeds OUT_DIR\n";
    return 2;
  }
  toyllm::fuzz::out_dir = argv[1];
  return toyllm::fuzz::Run();
}
