// Hugging Face checkpoints (config.json + safetensors): stories260K re-exported the way
// transformers stores a LlamaForCausalLM (Q and K rows permuted into the rotate-half
// layout) in F32, BF16 and two shards must compute what the llama2.c file computes, and
// convert to GGUF without loss. Broken files and configs must give clean errors naming the
// file and the problem.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "models/hf_reader.h"
#include "models/llama3_rope.h"
#include "models/llama_gguf_export.h"
#include "models/model_file.h"
#include "models/ggml_type.h"
#include "runtime/weight_convert.h"
#include "tests/test_env.h"
#include "tests/test_util.h"
#include "tokenizer/byte_alphabet.h"
#include "tokenizer/load_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace toyllm {
namespace {

using ModelOr = absl::StatusOr<std::unique_ptr<ModelFile>>;

// The logits compared below are those of every position of these twenty tokens.
const std::vector<int> kTokens = testing::MixedTokens();

// ---------------------------------------------------------------------------------------
// Writing Hugging Face checkpoints.

// Hugging Face's row order for Q and K (transformers' convert_llama_weights_to_hf.py
// permute): within each head, interleaved row 2j + i moves to row i·head_dim/2 + j, so that
// rotate_half's pairs (j, j + head_dim/2) hold what Meta's pairs (2j, 2j + 1) held.
std::vector<float> PermuteToRotateHalf(const float* w, int n_heads, int head_dim, int cols) {
  std::vector<float> out(static_cast<size_t>(n_heads) * head_dim * cols);
  for (int h = 0; h < n_heads; ++h) {
    for (int j = 0; j < head_dim / 2; ++j) {
      for (int i = 0; i < 2; ++i) {
        const size_t from = static_cast<size_t>(h) * head_dim + 2 * j + i;
        const size_t to = static_cast<size_t>(h) * head_dim + i * head_dim / 2 + j;
        std::copy_n(w + from * cols, cols, out.begin() + to * cols);
      }
    }
  }
  return out;
}

struct StTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string data;
};

std::string Le64(uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }

// A safetensors file: 8-byte header length, the JSON header padded with spaces to a
// multiple of 8, then the tensors' bytes in order.
std::string SafetensorsBytes(const std::vector<StTensor>& tensors, int extra_spaces = 0) {
  std::string header = R"({"__metadata__":{"format":"pt"})";
  uint64_t offset = 0;
  for (const StTensor& t : tensors) {
    absl::StrAppend(&header, ",\"", t.name, "\":{\"dtype\":\"", t.dtype, "\",\"shape\":[",
                    absl::StrJoin(t.shape, ","), "],\"data_offsets\":[", offset, ",",
                    offset + t.data.size(), "]}");
    offset += t.data.size();
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8 + extra_spaces, ' ');
  std::string out = Le64(header.size()) + header;
  for (const StTensor& t : tensors) out += t.data;
  return out;
}

std::string Encode(const float* data, int64_t n, const std::string& dtype) {
  std::string out;
  if (dtype == "F32") {
    out.assign(reinterpret_cast<const char*>(data), n * sizeof(float));
  } else {
    FromFloat32(dtype == "BF16" ? GgmlType::kBF16 : GgmlType::kF16, data, n, &out);
  }
  return out;
}

// The tensors of a model under LlamaForCausalLM's names, with Q and K permuted unless
// `permute` is false (then the file is wrong on purpose).
std::vector<StTensor> HfTensors(const ModelFile& model, const std::string& dtype, bool permute = true) {
  const ModelConfig& c = model.config;
  std::vector<StTensor> out;
  const auto matrix = [&](const std::string& name, const Matrix& m, int rope_heads = 0) {
    std::vector<float> rows(m.floats(), m.floats() + int64_t{m.rows} * m.cols);
    if (rope_heads > 0 && permute) rows = PermuteToRotateHalf(m.floats(), rope_heads, c.head_dim, m.cols);
    out.push_back({name, dtype, {m.rows, m.cols}, Encode(rows.data(), rows.size(), dtype)});
  };
  const auto vector = [&](const std::string& name, const float* v) {
    out.push_back({name, dtype, {c.dim}, Encode(v, c.dim, dtype)});
  };
  const ModelWeights& w = model.weights;
  matrix("model.embed_tokens.weight", w.token_embedding);
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    const std::string p = absl::StrCat("model.layers.", l, ".");
    vector(p + "input_layernorm.weight", lw.attn_norm);
    matrix(p + "self_attn.q_proj.weight", lw.wq, c.n_heads);
    matrix(p + "self_attn.k_proj.weight", lw.wk, c.n_kv_heads);
    matrix(p + "self_attn.v_proj.weight", lw.wv);
    matrix(p + "self_attn.o_proj.weight", lw.wo);
    vector(p + "post_attention_layernorm.weight", lw.ffn_norm);
    matrix(p + "mlp.gate_proj.weight", lw.w1);
    matrix(p + "mlp.up_proj.weight", lw.w3);
    matrix(p + "mlp.down_proj.weight", lw.w2);
  }
  vector("model.norm.weight", w.output_norm);
  return out;
}

std::string ConfigJson(const ModelConfig& c, const std::string& dtype) {
  return absl::StrCat(R"({
  "architectures": ["LlamaForCausalLM"],
  "model_type": "llama",
  "hidden_size": )", c.dim, R"(,
  "intermediate_size": )", c.hidden_dim, R"(,
  "num_hidden_layers": )", c.n_layers, R"(,
  "num_attention_heads": )", c.n_heads, R"(,
  "num_key_value_heads": )", c.n_kv_heads, R"(,
  "vocab_size": )", c.vocab_size, R"(,
  "max_position_embeddings": )", c.context_length, R"(,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "rope_scaling": null,
  "hidden_act": "silu",
  "tie_word_embeddings": true,
  "attention_bias": false,
  "bos_token_id": 1,
  "eos_token_id": 2,
  "torch_dtype": ")", dtype == "F32" ? "float32" : "bfloat16", R"("
})");
}

// `text` with its first `from` replaced by `to`; a `from` it lacks fails the test.
std::string ReplacedOnce(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Writes a Hugging Face directory: config.json, tokenizer.model and the weights in one
// model.safetensors or, with `shards`, two shard files and model.safetensors.index.json.
void WriteHfDirectory(const std::string& dir, const std::string& config,
                      const std::vector<StTensor>& tensors, const std::string& tokenizer_model,
                      bool shards = false) {
  std::filesystem::create_directories(dir);
  testing::WriteFile(dir + "/config.json", config);
  if (!tokenizer_model.empty()) testing::WriteFile(dir + "/tokenizer.model", tokenizer_model);
  if (!shards) {
    testing::WriteFile(dir + "/model.safetensors", SafetensorsBytes(tensors));
    return;
  }
  const size_t half = tensors.size() / 2;
  const std::vector<StTensor> first(tensors.begin(), tensors.begin() + half);
  const std::vector<StTensor> second(tensors.begin() + half, tensors.end());
  const char* names[2] = {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};
  testing::WriteFile(dir + "/" + names[0], SafetensorsBytes(first));
  testing::WriteFile(dir + "/" + names[1], SafetensorsBytes(second));
  uint64_t total = 0;
  std::vector<std::string> map;
  for (size_t i = 0; i < tensors.size(); ++i) {
    total += tensors[i].data.size();
    map.push_back(absl::StrCat("    \"", tensors[i].name, "\": \"", names[i < half ? 0 : 1], "\""));
  }
  testing::WriteFile(dir + "/model.safetensors.index.json",
            absl::StrCat("{\n  \"metadata\": {\"total_size\": ", total, "},\n  \"weight_map\": {\n",
                         absl::StrJoin(map, ",\n"), "\n  }\n}\n"));
}

// ---------------------------------------------------------------------------------------

class safetensors : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string bin = testing::Stories260K();
    tok_ = testing::Tok512();
    TOYLLM_REQUIRE_FILE(bin);
    TOYLLM_REQUIRE_FILE(tok_);
    ModelOr model = LoadModel(bin);
    ASSERT_TRUE(model.ok()) << model.status();
    bin_ = *std::move(model);
    dir_ = testing::TempDir();
  }
  void TearDown() override { testing::RemoveTempDir(dir_); }

  // stories260K as a Hugging Face directory `name` under the temp dir.
  std::string Export(const std::string& name, const std::string& dtype, bool shards = false,
                     bool permute = true) {
    const std::string dir = dir_ + "/" + name;
    WriteHfDirectory(dir, ConfigJson(bin_->config, dtype), HfTensors(*bin_, dtype, permute),
                     testing::ReadFile(tok_), shards);
    return dir;
  }

  std::string tok_, dir_;
  std::unique_ptr<ModelFile> bin_;
};

TEST_F(safetensors, F32CheckpointComputesWhatTheBinComputes) {
  const std::string dir = Export("f32", "F32");
  ModelOr hf = LoadModel(dir);
  ASSERT_TRUE(hf.ok()) << hf.status();
  EXPECT_EQ((*hf)->format, "Hugging Face safetensors (1 file)");
  const ModelConfig& a = bin_->config;
  const ModelConfig& b = (*hf)->config;
  testing::ExpectSameDimensions(b, a);
  EXPECT_EQ(b.context_length, 512);
  EXPECT_TRUE(b.tied_output);
  EXPECT_FLOAT_EQ(b.norm_eps, 1e-5f);
  EXPECT_EQ(b.rope_layout, RopeLayout::kInterleaved);
  // Q and K are back in the interleaved order, exactly.
  for (int l : {0, 4}) {
    const LayerWeights& x = bin_->weights.layers[l];
    const LayerWeights& y = (*hf)->weights.layers[l];
    EXPECT_TRUE(std::equal(x.wq.floats(), x.wq.floats() + 64 * 64, y.wq.floats())) << l;
    EXPECT_TRUE(std::equal(x.wk.floats(), x.wk.floats() + 32 * 64, y.wk.floats())) << l;
    EXPECT_TRUE(std::equal(x.w2.floats(), x.w2.floats() + 64 * 172, y.w2.floats())) << l;
  }
  EXPECT_EQ((*hf)->vocabulary.sentencepiece_model, testing::ReadFile(tok_));

  const std::vector<float> expected = testing::AllLogits(*bin_, kTokens);
  ASSERT_EQ(expected.size(), kTokens.size() * 512);
  EXPECT_LE(testing::MaxAbsDiff(testing::AllLogits(**hf, kTokens), expected), 1e-5f);
}

// A byte-level tokenizer.json instead of tokenizer.model: read as llama.cpp's gpt2
// vocabulary, padded to the embedding's rows, written into the GGUF by convert.
TEST_F(safetensors, TokenizerJsonTravelsIntoTheGguf) {
  const std::string dir = dir_ + "/bpe";
  WriteHfDirectory(dir, ConfigJson(bin_->config, "F32"), HfTensors(*bin_, "F32"), "");
  std::string vocab;
  for (int b = 0; b < 256; ++b) {
    std::string piece = ByteToAlphabet(static_cast<uint8_t>(b));
    if (piece == "\"" || piece == "\\") piece = "\\" + piece;
    absl::StrAppend(&vocab, "\"", piece, "\": ", b, ", ");
  }
  testing::WriteFile(dir + "/tokenizer.json",
                     absl::StrCat(R"({"added_tokens": [{"id": 257, "content": "<|im_end|>", "special": true}],)",
                                  R"("pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {)", vocab,
                                  R"("ab": 256}, "merges": ["a b"]}})"));
  testing::WriteFile(dir + "/tokenizer_config.json", R"({"eos_token": "<|im_end|>", "add_bos_token": false})");
  ModelOr hf = LoadModel(dir);
  ASSERT_TRUE(hf.ok()) << hf.status();
  EXPECT_EQ((*hf)->vocabulary.model, "gpt2");
  EXPECT_EQ((*hf)->vocabulary.pre, "gpt-2");
  ASSERT_EQ((*hf)->vocabulary.tokens.size(), 512u);
  EXPECT_EQ((*hf)->vocabulary.tokens[300], "[PAD300]");

  const std::string gguf = dir_ + "/bpe.gguf";
  ASSERT_TRUE(testing::Succeeds(testing::RunToyllm({"convert", dir, "-o", gguf})));
  const testing::RunResult r = testing::RunToyllm({"tokenize", "-m", gguf, "-p", "abc<|im_end|>", "--ids"});
  ASSERT_TRUE(testing::Succeeds(r));
  EXPECT_EQ(r.out, "256 99 257\n");  // no BOS: add_bos_token false
}

TEST_F(safetensors, UnalignedTensorDataIsReadToo) {
  // The format does not promise aligned data: a header of 8k+1 bytes puts every F32 tensor
  // at an odd address, which the reader must copy instead of viewing in place.
  const std::string dir = dir_ + "/unaligned";
  WriteHfDirectory(dir, ConfigJson(bin_->config, "F32"), {}, "");
  testing::WriteFile(dir + "/model.safetensors", SafetensorsBytes(HfTensors(*bin_, "F32"), /*extra_spaces=*/1));
  ModelOr hf = LoadModel(dir);
  ASSERT_TRUE(hf.ok()) << hf.status();
  uint64_t header_bytes;
  std::memcpy(&header_bytes, (*hf)->mappings[0]->data(), 8);
  EXPECT_EQ((8 + header_bytes) % 8, 1u) << "the tensor data starts at an odd offset";
  EXPECT_LE(testing::MaxAbsDiff(testing::AllLogits(**hf, kTokens), testing::AllLogits(*bin_, kTokens)), 1e-5f);
}

TEST_F(safetensors, UnpermutedQAndKWouldBeWrong) {
  // The control: the same file without HF's permutation computes something else, so the
  // test above does check the layout.
  ModelOr hf = LoadModel(Export("unpermuted", "F32", false, /*permute=*/false));
  ASSERT_TRUE(hf.ok()) << hf.status();
  EXPECT_GT(testing::MaxAbsDiff(testing::AllLogits(**hf, kTokens), testing::AllLogits(*bin_, kTokens)), 0.1f);
}

TEST_F(safetensors, Bf16CheckpointIsClose) {
  ModelOr hf = LoadModel(Export("bf16", "BF16"));
  ASSERT_TRUE(hf.ok()) << hf.status();
  const float diff = testing::MaxAbsDiff(testing::AllLogits(**hf, kTokens), testing::AllLogits(*bin_, kTokens));
  // Measured: 0.0866 (everything in bf16, norms included). Bound about 2.3x.
  std::cerr << "bf16 checkpoint: max abs logit difference " << diff << "\n";
  EXPECT_GT(diff, 0.0f);
  EXPECT_LT(diff, 0.2f);
}

TEST_F(safetensors, ShardedCheckpointEqualsTheSingleFile) {
  ModelOr single = LoadModel(Export("single", "F32"));
  ModelOr sharded = LoadModel(Export("sharded", "F32", /*shards=*/true));
  ASSERT_TRUE(single.ok()) << single.status();
  ASSERT_TRUE(sharded.ok()) << sharded.status();
  EXPECT_EQ((*sharded)->format, "Hugging Face safetensors (2 files)");
  EXPECT_EQ((*sharded)->mappings.size(), 2u);
  const std::vector<float> expected = testing::AllLogits(**single, kTokens);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(testing::AllLogits(**sharded, kTokens), expected);
}

TEST_F(safetensors, ConvertsToGgufWithoutLoss) {
  const std::string dir = Export("f32", "F32");
  ModelOr hf = LoadModel(dir);
  ASSERT_TRUE(hf.ok()) << hf.status();
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadTokenizer((*hf)->vocabulary, dir);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  ExportOptions options;
  options.tokenizer = tokenizer->get();
  const std::string path = dir_ + "/from_hf.gguf";
  const absl::Status written = WriteLlamaGguf(path, (*hf)->config, (*hf)->weights, options);
  ASSERT_TRUE(written.ok()) << written;
  ModelOr gguf = LoadModel(path);
  ASSERT_TRUE(gguf.ok()) << gguf.status();
  EXPECT_EQ((*gguf)->config.n_kv_heads, 4);
  const std::vector<float> expected = testing::AllLogits(**hf, kTokens);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(testing::AllLogits(**gguf, kTokens), expected);
  // And so what the llama2.c file computes.
  EXPECT_LE(testing::MaxAbsDiff(testing::AllLogits(**gguf, kTokens), testing::AllLogits(*bin_, kTokens)), 1e-5f);
}

// ---------------------------------------------------------------------------------------
// Qwen 2, Qwen 3 and Llama 3.1 checkpoints, made from stories260K's weights.

// The values a family adds, in the interleaved order of stories260K's Q and K rows, and a
// config and weights of stories260K with them: what a Hugging Face directory of that family
// must compute once its rotate-half rows are taken into account.
struct FamilyModel {
  ModelConfig config;
  ModelWeights weights;
  std::vector<std::vector<float>> bq, bk, bv, q_norm, k_norm;  // per layer
};

FamilyModel WithFamily(const ModelFile& bin, const std::string& family) {
  FamilyModel f;
  f.config = bin.config;
  f.weights = bin.weights;
  const ModelConfig& c = bin.config;
  std::mt19937 rng(17);
  const auto values = [&rng](int n, float center, float scale) {
    std::vector<float> v(n);
    for (float& x : v) x = center + scale * static_cast<float>(2.0 * rng() / 4294967295.0 - 1.0);
    return v;
  };
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& lw = f.weights.layers[l];
    if (family == "qwen2") {
      lw.bq = f.bq.emplace_back(values(c.q_dim(), 0.0f, 0.5f)).data();
      lw.bk = f.bk.emplace_back(values(c.kv_dim(), 0.0f, 0.5f)).data();
      lw.bv = f.bv.emplace_back(values(c.kv_dim(), 0.0f, 0.5f)).data();
    } else if (family == "qwen3") {
      lw.q_norm = f.q_norm.emplace_back(values(c.head_dim, 1.0f, 0.5f)).data();
      lw.k_norm = f.k_norm.emplace_back(values(c.head_dim, 1.0f, 0.5f)).data();
    }
  }
  f.config.qkv_bias = family == "qwen2";
  f.config.qk_norm = family == "qwen3";
  return f;
}

// The directory of `family` (qwen2, qwen3) for WithFamily's model: Q and K rows and their
// biases and norms in rotate-half order, as transformers stores them.
void WriteFamilyDirectory(const std::string& dir, const ModelFile& bin, const FamilyModel& f,
                          const std::string& family) {
  const ModelConfig& c = bin.config;
  std::vector<StTensor> tensors = HfTensors(bin, "F32");
  const auto vector = [&](const std::string& name, const std::vector<float>& v, int heads) {
    const std::vector<float> rows = PermuteToRotateHalf(v.data(), heads, static_cast<int>(v.size()) / heads, 1);
    tensors.push_back({name, "F32", {static_cast<int64_t>(v.size())}, Encode(rows.data(), rows.size(), "F32")});
  };
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = absl::StrCat("model.layers.", l, ".self_attn.");
    if (family == "qwen2") {
      vector(p + "q_proj.bias", f.bq[l], c.n_heads);
      vector(p + "k_proj.bias", f.bk[l], c.n_kv_heads);
      tensors.push_back({p + "v_proj.bias", "F32", {c.kv_dim()}, Encode(f.bv[l].data(), c.kv_dim(), "F32")});
    } else {
      vector(p + "q_norm.weight", f.q_norm[l], 1);
      vector(p + "k_norm.weight", f.k_norm[l], 1);
    }
  }
  const std::string type = family == "qwen2" ? "Qwen2ForCausalLM" : "Qwen3ForCausalLM";
  const std::string config =
      ReplacedOnce(ReplacedOnce(ConfigJson(c, "F32"), "[\"LlamaForCausalLM\"]", "[\"" + type + "\"]"),
                   "\"model_type\": \"llama\"", "\"model_type\": \"" + family + "\"");
  WriteHfDirectory(dir, config, tensors, "");
}

// Written as GGUF and read back: the file must name llama.cpp's architecture and compute
// exactly what `model` computes.
void ExpectGgufRoundTrip(const ModelFile& model, const std::string& path, const std::string& arch,
                         const std::string& tensor) {
  ASSERT_TRUE(WriteLlamaGguf(path, model.config, model.weights, ExportOptions{}).ok());
  ModelOr gguf = LoadModel(path);
  ASSERT_TRUE(gguf.ok()) << gguf.status();
  EXPECT_EQ((*gguf)->format, "GGUF v3 (" + arch + ")");
  EXPECT_TRUE(std::any_of((*gguf)->tensors.begin(), (*gguf)->tensors.end(),
                          [&](const ModelFile::Tensor& t) { return t.name == tensor; }))
      << tensor;
  EXPECT_EQ(testing::AllLogits(**gguf, kTokens), testing::AllLogits(model, kTokens));
}

TEST_F(safetensors, QwenCheckpointsKeepRotateHalfAndComputeTheirOptions) {
  for (const std::string family : {"qwen2", "qwen3"}) {
    SCOPED_TRACE(family);
    const FamilyModel expected = WithFamily(*bin_, family);
    const std::string dir = dir_ + "/" + family;
    WriteFamilyDirectory(dir, *bin_, expected, family);
    ModelOr hf = LoadModel(dir);
    ASSERT_TRUE(hf.ok()) << hf.status();
    const ModelConfig& c = (*hf)->config;
    EXPECT_EQ(c.rope_layout, RopeLayout::kHalfSplit);
    EXPECT_EQ(c.qkv_bias, family == "qwen2");
    EXPECT_EQ(c.qk_norm, family == "qwen3");
    const std::vector<float> want = testing::AllLogits(expected.config, expected.weights, kTokens, 512);
    ASSERT_FALSE(want.empty());
    // Measured 1.0e-5: Q and K rows in another order take other rounding paths.
    EXPECT_LE(testing::MaxAbsDiff(testing::AllLogits(**hf, kTokens), want), 1e-4f);
    // The family's tensors matter: without them the logits move.
    EXPECT_GT(testing::MaxAbsDiff(testing::AllLogits(*bin_, kTokens), want), 0.01f);
    ExpectGgufRoundTrip(**hf, dir_ + "/" + family + ".gguf", family,
                        family == "qwen2" ? "blk.4.attn_k.bias" : "blk.4.attn_q_norm.weight");
  }
}

TEST(safetensors_llama3, RopeFactorsAreTheConvertersValues) {
  // Llama 3.1's rope_scaling; the values convert_hf_to_gguf.py writes (../shared/zoo README).
  const std::vector<float> f = Llama3RopeFactors(500000.0f, 64, Llama3RopeScaling{8.0f, 1.0f, 4.0f, 8192});
  ASSERT_EQ(f.size(), 32u);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(f[i], 1.0f) << i;
  EXPECT_NEAR(f[15], 1.5534146f, 2e-6f);
  EXPECT_NEAR(f[16], 2.6945300f, 2e-6f);
  EXPECT_NEAR(f[17], 5.2573271f, 5e-6f);
  for (int i = 18; i < 32; ++i) EXPECT_EQ(f[i], 8.0f) << i;
}

TEST_F(safetensors, Llama3RopeScalingBecomesFrequencyFactors) {
  const std::string dir = dir_ + "/llama3";
  const std::string scaling = R"("rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
    "high_freq_factor": 4.0, "original_max_position_embeddings": 2048})";
  WriteHfDirectory(dir, ReplacedOnce(ConfigJson(bin_->config, "F32"), "\"rope_scaling\": null", scaling),
                   HfTensors(*bin_, "F32"), "");
  ModelOr hf = LoadModel(dir);
  ASSERT_TRUE(hf.ok()) << hf.status();
  // stories260K's pairs turn every 6, 63, 628 and 6283 positions: against an original
  // context of 2048 (4 to 1 turns there: high and low factor) the first two stay, the last
  // is slowed 8 times and the third in between.
  const std::vector<float>& f = (*hf)->config.rope_freq_factors;
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], 1.0f);
  EXPECT_GT(f[2], 1.0f);
  EXPECT_LT(f[2], 8.0f);
  EXPECT_EQ(f[3], 8.0f);
  EXPECT_EQ(f, Llama3RopeFactors(10000.0f, 8, Llama3RopeScaling{8.0f, 1.0f, 4.0f, 2048}));
  ModelConfig scaled = bin_->config;
  scaled.rope_freq_factors = f;
  const std::vector<float> want = testing::AllLogits(scaled, bin_->weights, kTokens, 512);
  EXPECT_LE(testing::MaxAbsDiff(testing::AllLogits(**hf, kTokens), want), 1e-5f);
  EXPECT_GT(testing::MaxAbsDiff(testing::AllLogits(*bin_, kTokens), want), 0.01f);
  ExpectGgufRoundTrip(**hf, dir_ + "/llama3.gguf", "llama", "rope_freqs.weight");
}

// Linear scaling (Hugging Face's LlamaLinearScalingRotaryEmbedding) divides every position by
// its factor: every pair's frequency divided by it.
TEST_F(safetensors, LinearRopeScalingDividesEveryFrequency) {
  const std::string dir = dir_ + "/linear";
  WriteHfDirectory(dir, ReplacedOnce(ConfigJson(bin_->config, "F32"), "\"rope_scaling\": null",
                                     R"("rope_scaling": {"type": "linear", "factor": 4.0})"),
                   HfTensors(*bin_, "F32"), "");
  ModelOr hf = LoadModel(dir);
  ASSERT_TRUE(hf.ok()) << hf.status();
  EXPECT_EQ((*hf)->config.rope_freq_factors, std::vector<float>(4, 4.0f));
  EXPECT_GT(testing::MaxAbsDiff(testing::AllLogits(**hf, kTokens), testing::AllLogits(*bin_, kTokens)), 0.01f);
}

TEST(safetensors_permutation, UnpermuteInvertsHuggingFacesPermutation) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  // (heads, head_dim, cols): stories260K's Q and K (GQA), Llama-2 7B-like heads, odd cols.
  for (auto [heads, head_dim, cols] : {std::tuple{8, 8, 64}, std::tuple{4, 8, 64}, std::tuple{32, 4, 7},
                                       std::tuple{2, 128, 3}, std::tuple{1, 2, 5}}) {
    SCOPED_TRACE(absl::StrCat(heads, " heads of ", head_dim, ", ", cols, " columns"));
    std::vector<float> w(static_cast<size_t>(heads) * head_dim * cols);
    for (float& v : w) v = normal(rng);
    const std::vector<float> hf = PermuteToRotateHalf(w.data(), heads, head_dim, cols);
    if (head_dim > 2) {  // with 2 rows a head, the order stays
      EXPECT_NE(hf, w);
    }
    EXPECT_EQ(UnpermuteRotateHalf(hf.data(), heads, head_dim, cols), w);
    // Row by row: HF row i·d/2 + j of head h is interleaved row 2j + i.
    const std::vector<float> back = UnpermuteRotateHalf(w.data(), heads, head_dim, cols);
    const int h = heads - 1, j = head_dim / 2 - 1;
    for (int i = 0; i < 2; ++i) {
      const size_t hf_row = static_cast<size_t>(h) * head_dim + i * head_dim / 2 + j;
      const size_t meta_row = static_cast<size_t>(h) * head_dim + 2 * j + i;
      EXPECT_EQ(back[meta_row * cols], w[hf_row * cols]);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Broken files.

// A safetensors file's start: the header length, then the header as given.
std::string Header(const std::string& json) {
  std::string header = json;
  return Le64(header.size()) + header;
}

TEST_F(safetensors, CorruptedSafetensorsFailCleanly) {
  const std::string config = ConfigJson(bin_->config, "F32");
  const std::vector<StTensor> tensors = HfTensors(*bin_, "F32");
  const std::string good = SafetensorsBytes(tensors);
  const int64_t rss_before = testing::PeakRssKiB();
  int n = 0;
  // Writes the directory with `bytes` as model.safetensors and loads it.
  const auto load = [&](const std::string& bytes, std::initializer_list<std::string> phrases) {
    const std::string dir = absl::StrCat(dir_, "/bad", n++);
    WriteHfDirectory(dir, config, {}, "");
    const std::string file = testing::WriteFile(dir + "/model.safetensors", bytes);
    SCOPED_TRACE(file);
    testing::ExpectError(LoadModel(dir), file, phrases);
  };

  load(good.substr(0, 5), {"bad safetensors", "shorter than its 8-byte header length"});
  load(Le64(good.size()) + good.substr(8),  // 8 bytes past the end
       {"a header of " + std::to_string(good.size()) + " bytes does not fit the file"});
  load(Le64(200'000'000) + good.substr(8), {"a header of 200000000 bytes does not fit the file"});
  load(Le64(~uint64_t{0}) + good.substr(8), {"a header of 18446744073709551615 bytes"});
  load(Header("{\"a\": [1, 2,") + std::string(64, '\0'), {"the header is not a JSON object"});
  load(Header("not json at all"), {"the header is not a JSON object"});
  load(Header("[1, 2, 3]"), {"the header is not a JSON object"});
  load(Header(R"({"x": {"shape": [2], "data_offsets": [0, 8]}})") + std::string(8, '\0'),
       {"tensor 'x' needs dtype, shape and two data_offsets"});
  load(Header(R"({"x": {"dtype": "F32", "data_offsets": [0, 8]}})") + std::string(8, '\0'),
       {"tensor 'x' needs dtype, shape and two data_offsets"});
  load(Header(R"({"x": {"dtype": "F32", "shape": [2]}})") + std::string(8, '\0'),
       {"tensor 'x' needs dtype, shape and two data_offsets"});
  load(Header(R"({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0]}})") + std::string(8, '\0'),
       {"tensor 'x' needs dtype, shape and two data_offsets"});
  load(Header(R"({"x": 5})"), {"tensor 'x' needs dtype, shape and two data_offsets"});
  load(Header(R"({"x": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 2]}})") + std::string(2, '\0'),
       {"tensor 'x' has unsupported dtype F8_E4M3"});
  load(Header(R"({"x": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})") + std::string(8, '\0'),
       {"tensor 'x' has data_offsets [8, 0] that end before they begin"});
  load(Header(R"({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 16]}})") + std::string(8, '\0'),
       {"tensor 'x' has data_offsets [0, 16] outside the 8-byte buffer (truncated?)"});
  load(Header(R"({"x": {"dtype": "F32", "shape": [2], "data_offsets": [-8, 8]}})") + std::string(8, '\0'),
       {"tensor 'x' has non-numeric data_offsets"});
  load(Header(R"({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})") + std::string(8, '\0'),
       {"tensor 'x' has 8 bytes for 3 F32 elements"});
  load(Header(R"({"x": {"dtype": "F32", "shape": [1099511627776, 1099511627776], "data_offsets": [0, 8]}})") +
           std::string(8, '\0'),
       {"tensor 'x' has an invalid or absurd shape"});
  load(Header(R"({"x": {"dtype": "F32", "shape": [18446744073709551615], "data_offsets": [0, 8]}})") +
           std::string(8, '\0'),
       {"tensor 'x' has an invalid or absurd shape"});
  load(Header(R"({"x": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})") + std::string(8, '\0'),
       {"tensor 'x' has an invalid or absurd shape"});
  load(Header(R"({"x": {"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]}})") + std::string(8, '\0'),
       {"tensor 'x' has an invalid or absurd shape"});
  load(good.substr(0, good.size() - 1),
       {"tensor 'model.norm.weight' has data_offsets [1039872, 1040128] outside the 1040127-byte buffer "
        "(truncated?)"});
  EXPECT_LT(testing::PeakRssKiB() - rss_before, 64 * 1024) << "KiB of peak memory for bad files";
}

TEST_F(safetensors, WrongTensorsFailCleanly) {
  const std::string config = ConfigJson(bin_->config, "F32");
  int n = 0;
  const auto load = [&](const std::vector<StTensor>& tensors, std::initializer_list<std::string> phrases) {
    const std::string dir = absl::StrCat(dir_, "/wrong", n++);
    WriteHfDirectory(dir, config, tensors, "");
    testing::ExpectError(LoadModel(dir), dir, phrases);
  };
  std::vector<StTensor> t = HfTensors(*bin_, "F32");
  t.pop_back();  // model.norm.weight
  load(t, {"tensor 'model.norm.weight' is missing"});
  t = HfTensors(*bin_, "F32");
  t[1].shape = {32, 2};  // model.layers.0.input_layernorm.weight, same bytes
  load(t, {"tensor 'model.layers.0.input_layernorm.weight' does not have the shape config.json implies"});
  t = HfTensors(*bin_, "F32");
  t[1].dtype = "I32";
  load(t, {"tensor 'model.layers.0.input_layernorm.weight' is I32"});
  const std::string no_weights = dir_ + "/no_weights";
  WriteHfDirectory(no_weights, config, {}, "");
  std::filesystem::remove(no_weights + "/model.safetensors");
  testing::ExpectError(LoadModel(no_weights), no_weights + "/model.safetensors", {"cannot open", "No such file"});
}

TEST_F(safetensors, BadConfigsFailCleanly) {
  const std::string good = ConfigJson(bin_->config, "F32");
  const std::vector<StTensor> tensors = HfTensors(*bin_, "F32");
  int n = 0;
  const auto load = [&](const std::string& config, std::initializer_list<std::string> phrases,
                        absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
    const std::string dir = absl::StrCat(dir_, "/config", n++);
    WriteHfDirectory(dir, config, tensors, "");
    if (config.empty()) std::filesystem::remove(dir + "/config.json");
    SCOPED_TRACE(config);
    const ModelOr result = LoadModel(dir);
    testing::ExpectError(result, dir, phrases);
    EXPECT_EQ(result.status().code(), code);
  };
  const auto with = [&good](const std::string& from, const std::string& to) {
    return ReplacedOnce(good, from, to);
  };
  load("", {"a directory without config.json"});
  load("{\"hidden_size\": 64,", {"config.json: not a JSON object"});
  load("[1, 2]", {"config.json: not a JSON object"});
  load(with("\"hidden_size\": 64,", ""), {"config.json: 'hidden_size' is missing"});
  load(with("\"hidden_size\": 64,", "\"hidden_size\": 64.5,"), {"'hidden_size' is not a valid integer"});
  load(with("\"hidden_size\": 64,", "\"hidden_size\": -64,"), {"'hidden_size' is not a valid integer"});
  load(with("\"num_attention_heads\": 8,", "\"num_attention_heads\": 0,"), {"n_heads = 0 is outside"});
  load(with("\"num_key_value_heads\": 4,", "\"num_key_value_heads\": 3,"),
       {"num_key_value_heads = 3 does not divide num_attention_heads = 8"});
  load(with("[\"LlamaForCausalLM\"],\n  \"model_type\": \"llama\"", "[\"GPT2LMHeadModel\"], \"model_type\": \"gpt2\""),
       {"only LlamaForCausalLM, Qwen2ForCausalLM and Qwen3ForCausalLM models are supported"},
       absl::StatusCode::kUnimplemented);
  load(with("\"rope_scaling\": null", "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 0.0}"),
       {"rope_scaling 'factor' must be positive"});
  load(with("\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"llama3\", \"low_freq_factor\": 4.0}"),
       {"rope_scaling needs high_freq_factor > low_freq_factor"});
  load(with("\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": -8.0}"),
       {"rope_scaling 'factor' must be positive"});
  load(with("\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0}"),
       {"RoPE scaling 'yarn' is not supported"}, absl::StatusCode::kUnimplemented);
  load(with("\"model_type\": \"llama\"", "\"model_type\": \"qwen2\", \"mlp_bias\": true"),
       {"attention or MLP biases are not supported"}, absl::StatusCode::kUnimplemented);
  load(with("\"attention_bias\": false", "\"attention_bias\": true"),
       {"attention or MLP biases are not supported"}, absl::StatusCode::kUnimplemented);
  load(with("\"model_type\": \"llama\"", "\"model_type\": \"qwen2\", \"use_sliding_window\": true"),
       {"sliding-window attention is not supported"}, absl::StatusCode::kUnimplemented);
  load(with("\"rms_norm_eps\": 1e-05", "\"rms_norm_eps\": \"small\""), {"'rms_norm_eps' is not a number"});
  // Values of the wrong JSON type must be errors, not exceptions.
  load(with("\"rope_scaling\": null", "\"rope_scaling\": {\"type\": 2}"),
       {"'rope_scaling' has a 'type' that is not a string"});
  load(with("\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": [\"linear\"]}"),
       {"'rope_scaling' has a 'rope_type' that is not a string"});
  load(with("\"tie_word_embeddings\": true", "\"tie_word_embeddings\": \"yes\""),
       {"'tie_word_embeddings' is not true or false"});
  load(with("\"attention_bias\": false", "\"attention_bias\": 0"), {"'attention_bias' is not true or false"});
}

TEST_F(safetensors, BadShardIndexesFailCleanly) {
  const std::string dir = Export("sharded", "F32", /*shards=*/true);
  const std::string index_path = dir + "/model.safetensors.index.json";
  const std::string index = testing::ReadFile(index_path);
  ASSERT_FALSE(index.empty());
  const auto replace = [&index](const std::string& from, const std::string& to) {
    return ReplacedOnce(index, from, to);
  };

  testing::WriteFile(index_path,
                     replace("\"model-00002-of-00002.safetensors\"", "\"../model-00002-of-00002.safetensors\""));
  testing::ExpectError(LoadModel(dir), index_path, {"names no shard file in the directory"});
  testing::WriteFile(index_path, replace("\"model-00002-of-00002.safetensors\"", "\"/etc/passwd\""));
  testing::ExpectError(LoadModel(dir), index_path, {"names no shard file in the directory"});
  testing::WriteFile(index_path, replace("\"model-00002-of-00002.safetensors\"", "7"));
  testing::ExpectError(LoadModel(dir), index_path, {"names no shard file in the directory"});
  testing::WriteFile(index_path,
                     replace("\"model-00002-of-00002.safetensors\"", "\"model-00003-of-00002.safetensors\""));
  testing::ExpectError(LoadModel(dir), dir + "/model-00003-of-00002.safetensors", {"cannot open", "No such file"});
  testing::WriteFile(index_path, replace("\"weight_map\"", "\"weights\""));
  testing::ExpectError(LoadModel(dir), index_path, {"no weight_map object"});
  testing::WriteFile(index_path, "{ not json");
  testing::ExpectError(LoadModel(dir), index_path, {"not a JSON object"});
  // A shard the index names but the directory lacks.
  testing::WriteFile(index_path, index);
  std::filesystem::remove(dir + "/model-00001-of-00002.safetensors");
  testing::ExpectError(LoadModel(dir), dir + "/model-00001-of-00002.safetensors", {"cannot open"});
}

}  // namespace
}  // namespace toyllm
