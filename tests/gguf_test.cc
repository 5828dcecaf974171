// GGUF: the llama.cpp-written stories260K file, toyllm's own writer (round trips in f32,
// f16, bf16 and q8_0), the element conversions it uses, and broken files. Every broken
// file must give a clean error naming the file and the problem, never a crash or a huge
// allocation.
#include <algorithm>
#include <iostream>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/ggml_type.h"
#include "models/gguf_file.h"
#include "models/gguf_reader.h"
#include "models/llama_gguf_export.h"
#include "models/mapped_file.h"
#include "models/model_file.h"
#include "runtime/weight_convert.h"
#include "runtime/generate.h"
#include "runtime/ops.h"
#include "runtime/sampler.h"
#include "runtime/transformer.h"
#include "tests/test_env.h"
#include "tests/test_util.h"
#include "tokenizer/load_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace toyllm {
namespace {

using ModelOr = absl::StatusOr<std::unique_ptr<ModelFile>>;

// ---------------------------------------------------------------------------------------
// Helpers.

// The logits compared below are those of every position of these twenty tokens, [20, vocab],
// computed with a context of kContext positions whatever the file records (the llama.cpp
// file says 128).
const std::vector<int> kTokens = testing::MixedTokens();
constexpr int kContext = 512;

template <typename T>
std::string Raw(T value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <typename T>
T Get(const std::string& bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// ---------------------------------------------------------------------------------------
// A tiny GGUF builder, independent of toyllm's writer, so that every field can be made
// wrong. Metadata values are encoded as their type id followed by the value.

std::string GgufString(const std::string& s) { return Raw<uint64_t>(s.size()) + s; }

enum : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};

std::string ValueU32(uint32_t v) { return Raw<uint32_t>(kU32) + Raw(v); }
std::string ValueU64(uint64_t v) { return Raw<uint32_t>(kU64) + Raw(v); }
std::string ValueF32(float v) { return Raw<uint32_t>(kF32) + Raw(v); }
std::string ValueString(const std::string& s) { return Raw<uint32_t>(kString) + GgufString(s); }
std::string ArrayHeader(uint32_t element, uint64_t count) {
  return Raw<uint32_t>(kArray) + Raw(element) + Raw(count);
}
std::string ValueStrings(const std::vector<std::string>& v) {
  std::string out = ArrayHeader(kString, v.size());
  for (const std::string& s : v) out += GgufString(s);
  return out;
}
std::string ValueF32s(const std::vector<float>& v) {
  std::string out = ArrayHeader(kF32, v.size());
  for (float f : v) out += Raw(f);
  return out;
}
std::string ValueI32s(const std::vector<int32_t>& v) {
  std::string out = ArrayHeader(kI32, v.size());
  for (int32_t i : v) out += Raw(i);
  return out;
}

struct GgufBuilder {
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;  // ggml order
    uint32_t type = 0;
    std::string data;
    std::optional<uint64_t> offset;  // default: packed in order, each aligned
  };

  uint32_t magic = kGgufMagic;
  uint32_t version = 3;
  std::optional<uint64_t> tensor_count, kv_count;  // default: the real counts
  uint64_t alignment = 32;                          // used for the layout only
  std::vector<std::pair<std::string, std::string>> kvs;
  std::vector<Tensor> tensors;

  void Set(const std::string& key, const std::string& value) {
    for (auto& kv : kvs) {
      if (kv.first == key) {
        kv.second = value;
        return;
      }
    }
    kvs.emplace_back(key, value);
  }
  void Remove(const std::string& key) {
    kvs.erase(std::remove_if(kvs.begin(), kvs.end(), [&](const auto& kv) { return kv.first == key; }),
              kvs.end());
  }
  Tensor& T(const std::string& name) {
    for (Tensor& t : tensors) {
      if (t.name == name) return t;
    }
    ADD_FAILURE() << "no tensor " << name;
    return tensors.front();
  }

  std::string Build() const {
    const auto pad = [this](uint64_t n) { return (alignment - n % alignment) % alignment; };
    std::string out = Raw(magic) + Raw(version) + Raw<uint64_t>(tensor_count.value_or(tensors.size())) +
                      Raw<uint64_t>(kv_count.value_or(kvs.size()));
    for (const auto& [key, value] : kvs) out += GgufString(key) + value;
    uint64_t offset = 0;
    for (const Tensor& t : tensors) {
      out += GgufString(t.name) + Raw<uint32_t>(t.dims.size());
      for (uint64_t d : t.dims) out += Raw(d);
      out += Raw(t.type) + Raw<uint64_t>(t.offset.value_or(offset));
      offset += t.data.size() + pad(t.data.size());
    }
    out.append(pad(out.size()), '\0');
    for (const Tensor& t : tensors) {
      out += t.data;
      out.append(pad(t.data.size()), '\0');
    }
    return out;
  }
};

std::string FloatBytes(const float* data, int64_t n) {
  return std::string(reinterpret_cast<const char*>(data), n * sizeof(float));
}

// A complete llama GGUF of a model in f32, with llama.cpp's keys and tensor names and the
// tokenizer as llama.cpp's arrays only (no exact SentencePiece model).
GgufBuilder ValidBuilder(const ModelFile& model, const Tokenizer& tokenizer) {
  const ModelConfig& c = model.config;
  GgufBuilder b;
  b.Set("general.architecture", ValueString("llama"));
  b.Set("general.name", ValueString("stories260K"));
  b.Set("general.alignment", ValueU32(32));
  b.Set("llama.context_length", ValueU32(c.context_length));
  b.Set("llama.embedding_length", ValueU32(c.dim));
  b.Set("llama.block_count", ValueU32(c.n_layers));
  b.Set("llama.feed_forward_length", ValueU32(c.hidden_dim));
  b.Set("llama.attention.head_count", ValueU32(c.n_heads));
  b.Set("llama.attention.head_count_kv", ValueU32(c.n_kv_heads));
  b.Set("llama.rope.dimension_count", ValueU32(c.head_dim));
  b.Set("llama.rope.freq_base", ValueF32(c.rope_theta));
  b.Set("llama.attention.layer_norm_rms_epsilon", ValueF32(c.norm_eps));
  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::vector<int32_t> types;
  for (int id = 0; id < tokenizer.vocab_size(); ++id) {
    pieces.push_back(tokenizer.Piece(id));
    scores.push_back(tokenizer.Score(id));
    types.push_back(static_cast<int32_t>(tokenizer.Type(id)));
  }
  b.Set("tokenizer.ggml.model", ValueString("llama"));
  b.Set("tokenizer.ggml.tokens", ValueStrings(pieces));
  b.Set("tokenizer.ggml.scores", ValueF32s(scores));
  b.Set("tokenizer.ggml.token_type", ValueI32s(types));
  b.Set("tokenizer.ggml.bos_token_id", ValueU32(1));
  b.Set("tokenizer.ggml.eos_token_id", ValueU32(2));
  b.Set("tokenizer.ggml.unknown_token_id", ValueU32(0));

  const auto matrix = [&b](const std::string& name, const Matrix& m) {
    b.tensors.push_back({name, {static_cast<uint64_t>(m.cols), static_cast<uint64_t>(m.rows)}, 0,
                         FloatBytes(m.floats(), int64_t{m.rows} * m.cols), std::nullopt});
  };
  const auto vector = [&b, &c](const std::string& name, const float* v) {
    b.tensors.push_back({name, {static_cast<uint64_t>(c.dim)}, 0, FloatBytes(v, c.dim), std::nullopt});
  };
  const ModelWeights& w = model.weights;
  matrix("token_embd.weight", w.token_embedding);
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    const std::string p = "blk." + std::to_string(l) + ".";
    vector(p + "attn_norm.weight", lw.attn_norm);
    matrix(p + "attn_q.weight", lw.wq);
    matrix(p + "attn_k.weight", lw.wk);
    matrix(p + "attn_v.weight", lw.wv);
    matrix(p + "attn_output.weight", lw.wo);
    vector(p + "ffn_norm.weight", lw.ffn_norm);
    matrix(p + "ffn_gate.weight", lw.w1);
    matrix(p + "ffn_down.weight", lw.w2);
    matrix(p + "ffn_up.weight", lw.w3);
  }
  vector("output_norm.weight", w.output_norm);
  return b;
}

// ---------------------------------------------------------------------------------------
// Fixture: the stories260K checkpoint and tokenizer, and a temp dir. Named after the file
// so that `ctest -R gguf` selects these tests.

class gguf : public ::testing::Test {
 protected:
  void SetUp() override {
    bin_ = testing::Stories260K();
    tok_ = testing::Tok512();
    TOYLLM_REQUIRE_FILE(bin_);
    TOYLLM_REQUIRE_FILE(tok_);
    ModelOr model = LoadModel(bin_);
    ASSERT_TRUE(model.ok()) << model.status();
    bin_model_ = *std::move(model);
    absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadSentencePieceFile(tok_);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    tokenizer_ = *std::move(tokenizer);
    dir_ = testing::TempDir();
  }

  void TearDown() override { testing::RemoveTempDir(dir_); }

  // stories260K.bin written by WriteLlamaGguf as `type`, with tok512 inside.
  std::string Export(GgmlType type, const std::string& name) {
    ExportOptions options;
    options.type = type;
    options.name = "stories260K";
    options.tokenizer = tokenizer_.get();
    const std::string path = dir_ + "/" + name;
    const absl::Status s = WriteLlamaGguf(path, bin_model_->config, bin_model_->weights, options);
    EXPECT_TRUE(s.ok()) << s;
    return path;
  }

  std::string bin_, tok_, dir_;
  std::unique_ptr<ModelFile> bin_model_;
  std::unique_ptr<Tokenizer> tokenizer_;
};

// ---------------------------------------------------------------------------------------
// The file llama.cpp's converter wrote.

TEST_F(gguf, LlamaCppFileLoadsWithItsTokenizerAndMatchesTheGoldenText) {
  const std::string path = testing::ModelPath("gguf/stories260K.llamacpp-f32.gguf");
  TOYLLM_REQUIRE_FILE(path);
  ModelOr model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelConfig& c = (*model)->config;
  EXPECT_EQ((*model)->format, "GGUF v3 (llama)");
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.hidden_dim, 172);
  EXPECT_EQ(c.n_layers, 5);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.head_dim, 8);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.context_length, 128);  // what llama.cpp recorded, not the trained 512
  EXPECT_FALSE(c.tied_output);       // llama.cpp stored output.weight as well
  EXPECT_FLOAT_EQ(c.norm_eps, 1e-5f);
  EXPECT_FLOAT_EQ(c.rope_theta, 10000.0f);
  EXPECT_EQ(c.rope_layout, RopeLayout::kInterleaved);

  // The same numbers as the .bin: the logits are bit-identical.
  const std::vector<float> expected = testing::AllLogits(*bin_model_, kTokens, kContext);
  ASSERT_EQ(expected.size(), kTokens.size() * 512);
  EXPECT_EQ(testing::AllLogits(**model, kTokens, kContext), expected);

  // The tokenizer rebuilt from tokenizer.ggml.* encodes like tok512.model.
  ASSERT_FALSE((*model)->vocabulary.empty());
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer =
      LoadTokenizer((*model)->vocabulary, path);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ((*tokenizer)->vocab_size(), 512);
  EXPECT_EQ((*tokenizer)->bos_id(), 1);
  EXPECT_EQ((*tokenizer)->eos_id(), 2);
  std::vector<int> ids = (*tokenizer)->Encode("Once upon a time", /*add_bos=*/true);
  EXPECT_EQ(ids, (std::vector<int>{1, 403, 407, 261, 378}));
  for (const char* text : {"Once upon a time", "Lily and Ben went to the park.", "x\ny\n",
                           "\"Hello!\" she said, 42 times.", "éß漢 字"}) {
    EXPECT_EQ((*tokenizer)->Encode(text, true), tokenizer_->Encode(text, true)) << text;
  }

  // Greedy generation with a context of 512 reproduces llama2.c's run.c.
  absl::StatusOr<std::unique_ptr<Transformer>> transformer =
      Transformer::Create(c, (*model)->weights, 512);
  ASSERT_TRUE(transformer.ok()) << transformer.status();
  Sampler sampler(SamplerOptions{.temperature = 0.0f});
  GenerateOptions options;
  options.n_predict = 252;
  options.stop_tokens = {(*tokenizer)->bos_id(), (*tokenizer)->eos_id()};
  absl::StatusOr<GenerateStats> stats =
      Generate(**transformer, sampler, ids, options, [&ids](int id) { ids.push_back(id); });
  ASSERT_TRUE(stats.ok()) << stats.status();
  std::string golden = testing::ReadFile(testing::GoldenDir() + "/stories260K/greedy_once.txt");
  ASSERT_FALSE(golden.empty()) << "golden file missing";
  ASSERT_EQ(golden.back(), '\n');
  golden.pop_back();
  EXPECT_EQ((*tokenizer)->Decode(ids), golden);
}

// ---------------------------------------------------------------------------------------
// toyllm's writer.

TEST_F(gguf, F32RoundTripIsBitIdentical) {
  const std::string path = Export(GgmlType::kF32, "f32.gguf");
  ModelOr model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelConfig& a = bin_model_->config;
  const ModelConfig& b = (*model)->config;
  testing::ExpectSameDimensions(b, a);
  EXPECT_EQ(b.context_length, 512);
  EXPECT_TRUE(b.tied_output);
  EXPECT_EQ(b.norm_eps, a.norm_eps);
  EXPECT_EQ(b.rope_theta, a.rope_theta);
  // f32 tensors are used in place, not copied.
  EXPECT_TRUE((*model)->converted.empty());
  EXPECT_EQ((*model)->weights.output.data, (*model)->weights.token_embedding.data);
  const std::vector<float> expected = testing::AllLogits(*bin_model_, kTokens, kContext);
  ASSERT_EQ(expected.size(), kTokens.size() * 512);
  EXPECT_EQ(testing::AllLogits(**model, kTokens, kContext), expected);
}

TEST_F(gguf, WrittenFileHasLlamaCppKeysTensorNamesAndDims) {
  const std::string path = Export(GgmlType::kF32, "f32.gguf");
  absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<GgufFile> g = GgufFile::Parse(**file);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->version(), 3u);
  EXPECT_EQ(g->alignment(), 32u);
  EXPECT_EQ(*g->GetString("general.architecture"), "llama");
  EXPECT_EQ(*g->GetString("general.name"), "stories260K");
  EXPECT_EQ(*g->GetInt("general.file_type"), 0);
  for (auto [key, value] : {std::pair{"llama.context_length", 512}, std::pair{"llama.embedding_length", 64},
                            std::pair{"llama.block_count", 5}, std::pair{"llama.feed_forward_length", 172},
                            std::pair{"llama.attention.head_count", 8},
                            std::pair{"llama.attention.head_count_kv", 4},
                            std::pair{"llama.rope.dimension_count", 8}, std::pair{"general.alignment", 32}}) {
    absl::StatusOr<int64_t> v = g->GetInt(key);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(*v, value) << key;
  }
  EXPECT_FLOAT_EQ(*g->GetFloat("llama.rope.freq_base"), 10000.0f);
  EXPECT_FLOAT_EQ(*g->GetFloat("llama.attention.layer_norm_rms_epsilon"), 1e-5f);

  // Tensors: llama.cpp's names, dims contiguous axis first, in the order llama.cpp writes.
  const std::vector<GgufTensor>& tensors = g->tensors();
  ASSERT_EQ(tensors.size(), 1u + 5 * 9 + 1);
  EXPECT_EQ(tensors.front().name, "token_embd.weight");
  EXPECT_EQ(tensors.back().name, "output_norm.weight");
  EXPECT_EQ(g->FindTensor("output.weight"), nullptr) << "tied: no separate classifier";
  const std::vector<std::pair<std::string, std::vector<int64_t>>> expected_dims = {
      {"token_embd.weight", {64, 512}},        {"blk.0.attn_norm.weight", {64}},
      {"blk.0.attn_q.weight", {64, 64}},       {"blk.0.attn_k.weight", {64, 32}},
      {"blk.0.attn_v.weight", {64, 32}},       {"blk.0.attn_output.weight", {64, 64}},
      {"blk.0.ffn_norm.weight", {64}},         {"blk.4.ffn_gate.weight", {64, 172}},
      {"blk.4.ffn_down.weight", {172, 64}},    {"blk.4.ffn_up.weight", {64, 172}},
      {"output_norm.weight", {64}}};
  for (const auto& [name, dims] : expected_dims) {
    const GgufTensor* t = g->FindTensor(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->dims, dims) << name;
    EXPECT_EQ(t->type, GgmlType::kF32) << name;
  }
  // The bytes are the .bin's, row-major: w2 of layer 4, row 3, column 171.
  const GgufTensor* w2 = g->FindTensor("blk.4.ffn_down.weight");
  float value;
  std::memcpy(&value, w2->data + (3 * 172 + 171) * sizeof(float), sizeof(float));
  EXPECT_EQ(value, bin_model_->weights.layers[4].w2.floats()[3 * 172 + 171]);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w2->data) % 32, 0u);

  // Tokenizer: llama.cpp's arrays and toyllm's exact model.
  absl::StatusOr<std::vector<std::string>> pieces = g->GetStringArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(pieces.ok()) << pieces.status();
  ASSERT_EQ(pieces->size(), 512u);
  EXPECT_EQ((*pieces)[0], "<unk>");
  EXPECT_EQ((*pieces)[1], "<s>");
  EXPECT_EQ((*pieces)[378], tokenizer_->Piece(378));
  EXPECT_EQ((*pieces)[13], "<0x0A>");
  absl::StatusOr<std::vector<float>> scores = g->GetFloatArray("tokenizer.ggml.scores");
  ASSERT_TRUE(scores.ok()) << scores.status();
  ASSERT_EQ(scores->size(), 512u);
  EXPECT_EQ((*scores)[400], tokenizer_->Score(400));
  absl::StatusOr<std::vector<int32_t>> types = g->GetIntArray("tokenizer.ggml.token_type");
  ASSERT_TRUE(types.ok()) << types.status();
  ASSERT_EQ(types->size(), 512u);
  EXPECT_EQ((*types)[0], 2);    // unknown
  EXPECT_EQ((*types)[1], 3);    // control
  EXPECT_EQ((*types)[13], 6);   // byte
  EXPECT_EQ((*types)[400], 1);  // normal
  EXPECT_EQ(*g->GetString("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(*g->GetInt("tokenizer.ggml.bos_token_id"), 1);
  EXPECT_EQ(*g->GetInt("tokenizer.ggml.eos_token_id"), 2);
  EXPECT_EQ(*g->GetInt("tokenizer.ggml.unknown_token_id"), 0);
  absl::StatusOr<std::string> exact = g->GetByteArray(kSentencePieceModelKey);
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(*exact, testing::ReadFile(tok_));
}

TEST_F(gguf, EmbeddedTokenizerEncodesExactlyLikeTok512) {
  const std::string path = Export(GgmlType::kF32, "f32.gguf");
  ModelOr model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::unique_ptr<Tokenizer>> embedded =
      LoadTokenizer((*model)->vocabulary, path);
  ASSERT_TRUE(embedded.ok()) << embedded.status();
  for (const char* text : {"Once upon a time", "a  b   c", "  leading and trailing  ",
                           "Tom said: \"No!\"\n\nThe end.", "tab\there", "ünïcödé 🙂"}) {
    EXPECT_EQ((*embedded)->Encode(text, true), tokenizer_->Encode(text, true)) << text;
  }
  EXPECT_EQ((*embedded)->Encode("Once upon a time", true), (std::vector<int>{1, 403, 407, 261, 378}));
  // Runs of spaces are where a tokenizer rebuilt from the arrays alone would differ: tok512
  // collapses them.
  EXPECT_EQ((*embedded)->Encode("a  b   c", false), tokenizer_->Encode("a b c", false));
}

TEST_F(gguf, QuantizedFilesStayCloseToF32) {
  const std::vector<float> f32 = testing::AllLogits(*bin_model_, kTokens, kContext);
  ASSERT_FALSE(f32.empty());
  // Measured max |logit - f32 logit| over the 20 x 512 logits: f16 0.0113, bf16 0.0668
  // (0.103 with the batch in bf16), q8_0 0.208 (w2 in f16; 0.250 in bf16), 0.272 token by
  // token. The bounds are 1.5-2.5x those.
  struct Case {
    GgmlType type;
    const char* file;
    float bound;
  };
  for (const Case& c : {Case{GgmlType::kF16, "f16.gguf", 0.03f}, Case{GgmlType::kBF16, "bf16.gguf", 0.15f},
                        Case{GgmlType::kQ8_0, "q8_0.gguf", 0.5f}}) {
    SCOPED_TRACE(c.file);
    const std::string path = Export(c.type, c.file);
    ModelOr model = LoadModel(path);
    ASSERT_TRUE(model.ok()) << model.status();
    const std::vector<float> logits = testing::AllLogits(**model, kTokens, kContext);
    const float diff = testing::MaxAbsDiff(logits, f32);
    std::cerr << GgmlTypeName(c.type) << ": max abs logit difference from f32 " << diff << "\n";
    EXPECT_GT(diff, 0.0f) << "a lossy type cannot be exact";
    EXPECT_LT(diff, c.bound);
    // Token by token, as generation runs: the GEMV kernels (for Q8_0 on the activations
    // quantized too) instead of the batch's dequantised GEMM.
    const std::vector<float> decoded =
        testing::AllLogits((*model)->config, (*model)->weights, kTokens, kContext, 1);
    const float decode_diff = testing::MaxAbsDiff(decoded, f32);
    std::cerr << GgmlTypeName(c.type) << " token by token: " << decode_diff << "\n";
    EXPECT_LT(decode_diff, c.bound);
    // The runtime computes on the matrices where the file maps them, in their stored type:
    // nothing is expanded to float32 (the norms are f32 already).
    EXPECT_TRUE((*model)->converted.empty());
    EXPECT_EQ((*model)->weights.layers[0].w3.type, c.type);

    // Re-exporting in the same type copies the stored bytes (no second rounding);
    // exporting as f32 writes exactly the weights the runtime computed with.
    ExportOptions options;
    options.type = c.type;
    options.name = "stories260K";
    options.tokenizer = tokenizer_.get();
    const std::string again = dir_ + "/again.gguf", wide = dir_ + "/wide.gguf";
    ASSERT_TRUE(WriteLlamaGguf(again, (*model)->config, (*model)->weights, options).ok());
    options.type = GgmlType::kF32;
    ASSERT_TRUE(WriteLlamaGguf(wide, (*model)->config, (*model)->weights, options).ok());
    EXPECT_EQ(testing::ReadFile(again), testing::ReadFile(path));
    ModelOr widened = LoadModel(wide);
    ASSERT_TRUE(widened.ok()) << widened.status();
    const auto floats = [](const Matrix& m) {
      std::vector<float> out(static_cast<size_t>(m.rows) * m.cols);
      ToFloat32(m.type, m.data, static_cast<int64_t>(out.size()), out.data());
      return out;
    };
    const ModelWeights &stored = (*model)->weights, &wide_weights = (*widened)->weights;
    EXPECT_EQ(floats(wide_weights.token_embedding), floats(stored.token_embedding));
    for (size_t l = 0; l < stored.layers.size(); ++l) {
      const LayerWeights &a = stored.layers[l], &b = wide_weights.layers[l];
      for (auto [x, y] : {std::pair{&a.wq, &b.wq}, std::pair{&a.wk, &b.wk}, std::pair{&a.wv, &b.wv},
                          std::pair{&a.wo, &b.wo}, std::pair{&a.w1, &b.w1}, std::pair{&a.w2, &b.w2},
                          std::pair{&a.w3, &b.w3}}) {
        EXPECT_EQ(floats(*y), floats(*x)) << "layer " << l;
      }
    }
    // The same weights give the same logits, unless the batch rounds them to bf16.
    if (!BatchRoundsToBf16(stored.layers[0].w3)) {
      EXPECT_EQ(testing::AllLogits(**widened, kTokens, kContext), logits);
    }

    absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
    ASSERT_TRUE(file.ok()) << file.status();
    absl::StatusOr<GgufFile> g = GgufFile::Parse(**file);
    ASSERT_TRUE(g.ok()) << g.status();
    for (const GgufTensor& t : g->tensors()) {
      GgmlType expected = c.type;
      if (t.dims.size() == 1) expected = GgmlType::kF32;  // norms stay f32
      // q8_0 needs rows of whole 32-blocks: w2 (172 columns) falls back to f16.
      if (c.type == GgmlType::kQ8_0 && t.dims[0] == 172) expected = GgmlType::kF16;
      EXPECT_EQ(t.type, expected) << t.name;
    }
    EXPECT_EQ(g->FindTensor("blk.0.ffn_down.weight")->type,
              c.type == GgmlType::kQ8_0 ? GgmlType::kF16 : c.type);
    EXPECT_EQ(g->FindTensor("blk.0.ffn_up.weight")->type, c.type);
    EXPECT_EQ(g->FindTensor("blk.0.ffn_down.weight")->bytes, 172u * 64 * 2);
    if (c.type == GgmlType::kQ8_0) {
      EXPECT_EQ(g->FindTensor("blk.0.ffn_up.weight")->bytes, 172u * 2 * 34);
      EXPECT_EQ(*g->GetInt("general.file_type"), 7);
      EXPECT_EQ(*g->GetInt("general.quantization_version"), 2);
    }
    if (c.type == GgmlType::kF16) {
      EXPECT_EQ(*g->GetInt("general.file_type"), 1);
    }
    if (c.type == GgmlType::kBF16) {
      EXPECT_EQ(*g->GetInt("general.file_type"), 32);
    }
  }
  const auto stored = [](GgmlType type, int cols) {
    return PresetTensorType({type}, {"blk.0.ffn_up.weight", cols, 0, 1, 1, false});
  };
  EXPECT_EQ(stored(GgmlType::kQ8_0, 172), GgmlType::kF16);
  EXPECT_EQ(stored(GgmlType::kQ8_0, 64), GgmlType::kQ8_0);
  EXPECT_EQ(stored(GgmlType::kBF16, 172), GgmlType::kBF16);
}

// The test's own builder writes what toyllm's reader accepts; the broken files below are
// variations of it, so this proves that each one fails for its one defect.
TEST_F(gguf, HandBuiltFileLoadsAndUsesTheArraysTokenizer) {
  const std::string path = testing::WriteFile(dir_, "built.gguf", ValidBuilder(*bin_model_, *tokenizer_).Build());
  ModelOr model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(testing::AllLogits(**model, kTokens, kContext), testing::AllLogits(*bin_model_, kTokens, kContext));
  absl::StatusOr<std::unique_ptr<Tokenizer>> rebuilt =
      LoadTokenizer((*model)->vocabulary, path);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  EXPECT_EQ((*rebuilt)->Encode("Once upon a time", true), (std::vector<int>{1, 403, 407, 261, 378}));
  // Without toyllm's exact model the rebuilt one keeps runs of spaces (GGUF does not say
  // whether the original collapsed them), which is why the writer embeds the original.
  EXPECT_NE((*rebuilt)->Encode("a  b   c", false), tokenizer_->Encode("a  b   c", false));

  // general.alignment is honoured: a file laid out at 64 bytes, and version 2 (same layout).
  GgufBuilder aligned = ValidBuilder(*bin_model_, *tokenizer_);
  aligned.alignment = 64;
  aligned.Set("general.alignment", ValueU32(64));
  aligned.Set("general.name", ValueString("x"));  // moves the end of the header off 64
  aligned.version = 2;
  const std::string aligned_bytes = aligned.Build();
  const std::string aligned_path = testing::WriteFile(dir_, "aligned64.gguf", aligned_bytes);
  ModelOr model64 = LoadModel(aligned_path);
  ASSERT_TRUE(model64.ok()) << model64.status();
  EXPECT_EQ((*model64)->format, "GGUF v2 (llama)");
  EXPECT_EQ(testing::AllLogits(**model64, kTokens, kContext), testing::AllLogits(*bin_model_, kTokens, kContext));
}

// ---------------------------------------------------------------------------------------
// Element conversions.

// A half's value computed independently: (-1)^s · 2^(e-15) · 1.m, or 2^-14 · 0.m.
double HalfValue(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double v = exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
  if (exponent == 0x1f) v = mantissa == 0 ? INFINITY : NAN;
  return sign ? -v : v;
}

TEST(gguf_tensor_convert, EveryHalfRoundTrips) {
  int nans = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    const double expected = HalfValue(static_cast<uint16_t>(h));
    if (std::isnan(expected)) {
      ++nans;
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      const uint16_t back = FloatToHalf(f);
      ASSERT_EQ(back & 0x7c00, 0x7c00) << std::hex << h;
      ASSERT_NE(back & 0x03ff, 0) << "NaN must stay NaN: " << std::hex << h;
      ASSERT_EQ(back & 0x8000, h & 0x8000) << std::hex << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), expected) << std::hex << h;
    ASSERT_EQ(FloatToHalf(f), h) << std::hex << h;
  }
  EXPECT_EQ(nans, 2 * 1023);
}

TEST(gguf_tensor_convert, HalfKnownValues) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalf(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);  // the tie above the largest half goes to infinity
  EXPECT_EQ(FloatToHalf(1e6f), 0x7C00);
  EXPECT_EQ(FloatToHalf(-INFINITY), 0xFC00);
  EXPECT_EQ(FloatToHalf(0.1f), 0x2E66);
  EXPECT_EQ(FloatToHalf(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(FloatToHalf(1e-8f), 0x0000);       // below half the smallest subnormal
  EXPECT_EQ(FloatToHalf(-1e-8f), 0x8000);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1023.0f, -24)), 0x03FF);  // largest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(FloatToHalf(6e-5f), 0x03EF);  // 6e-5 · 2^24 = 1006.63
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(HalfToFloat(0xC000), -2.0f);
  EXPECT_TRUE(std::isinf(HalfToFloat(0x7C00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7E00)));
  EXPECT_EQ(FloatToHalf(NAN) & 0x7c00, 0x7c00);
  EXPECT_NE(FloatToHalf(NAN) & 0x03ff, 0);
}

TEST(gguf_tensor_convert, HalfRoundsToNearestEven) {
  // Every midpoint between two adjacent finite halves goes to the even one; a float just
  // above or below it goes to the nearer one.
  for (uint32_t h = 0; h < 0x7BFF; ++h) {
    const float lo = HalfToFloat(static_cast<uint16_t>(h)), hi = HalfToFloat(static_cast<uint16_t>(h + 1));
    const float mid = (lo + hi) / 2;  // exact: a half has 11 significant bits, a float 24
    ASSERT_EQ(FloatToHalf(mid), (h % 2 == 0) ? h : h + 1) << std::hex << h;
    ASSERT_EQ(FloatToHalf(-mid), 0x8000 | ((h % 2 == 0) ? h : h + 1)) << std::hex << h;
    ASSERT_EQ(FloatToHalf(std::nextafter(mid, 0.0f)), h) << std::hex << h;
    ASSERT_EQ(FloatToHalf(std::nextafter(mid, INFINITY)), h + 1) << std::hex << h;
  }
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(FloatToHalf(3 * std::ldexp(1.0f, -25)), 0x0002);
  EXPECT_EQ(FloatToHalf(5 * std::ldexp(1.0f, -25)), 0x0002);
}

float FloatFromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(gguf_tensor_convert, Bf16) {
  int nans = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = Bf16ToFloat(static_cast<uint16_t>(b));
    const uint32_t bits = b << 16;
    ASSERT_EQ(std::isnan(f), std::isnan(FloatFromBits(bits)));
    if (std::isnan(f)) {
      ++nans;
      ASSERT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(f)))) << std::hex << b;
      continue;
    }
    ASSERT_EQ(f, FloatFromBits(bits)) << std::hex << b;
    ASSERT_EQ(FloatToBf16(f), b) << std::hex << b;
  }
  EXPECT_EQ(nans, 2 * 127);
  EXPECT_EQ(FloatToBf16(1.0f), 0x3F80);
  EXPECT_EQ(FloatToBf16(-2.0f), 0xC000);
  EXPECT_EQ(FloatToBf16(3.14159265f), 0x4049);
  EXPECT_EQ(FloatToBf16(FloatFromBits(0x3F808000)), 0x3F80);  // tie: to even
  EXPECT_EQ(FloatToBf16(FloatFromBits(0x3F818000)), 0x3F82);  // tie: to even
  EXPECT_EQ(FloatToBf16(FloatFromBits(0x3F808001)), 0x3F81);
  EXPECT_EQ(FloatToBf16(FloatFromBits(0x3F807FFF)), 0x3F80);
  EXPECT_EQ(FloatToBf16(FloatFromBits(0x7F7FFFFF)), 0x7F80);  // largest float rounds to inf
  EXPECT_EQ(FloatToBf16(FloatFromBits(0x00000001)), 0x0000);  // tiny subnormal to zero
  // Random floats: the result is one of the two neighbours, and the nearer one.
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits(0, 0x7F7FFFFF);
  for (int i = 0; i < 100000; ++i) {
    const float x = FloatFromBits(bits(rng));
    const uint16_t b = FloatToBf16(x);
    uint32_t u;
    std::memcpy(&u, &x, 4);
    const uint16_t lo = u >> 16, hi = lo + 1;
    ASSERT_TRUE(b == lo || b == hi) << x;
    // Rounding treats infinity as 2^128, the next power of two after the largest finite.
    const auto value = [](uint16_t v) {
      return v == 0x7F80 ? std::ldexp(1.0, 128) : double{Bf16ToFloat(v)};
    };
    const double err = std::fabs(value(b) - x), other = std::fabs(value(b == lo ? hi : lo) - x);
    ASSERT_LE(err, other) << x;
    if (err == other) {
      ASSERT_EQ(b % 2, 0) << "a tie goes to even: " << x;
    }
  }
}

TEST(gguf_tensor_convert, Q8_0BlocksAreWithinHalfAStep) {
  constexpr int kBlocks = 2000;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  // max|x| from 0.01 to 100: the scale max|x|/127 is then a normal fp16 number.
  std::uniform_real_distribution<float> log_scale(-2.0f, 2.0f);
  std::vector<float> x(kBlocks * 32);
  for (int b = 0; b < kBlocks; ++b) {
    const float scale = std::pow(10.0f, log_scale(rng));
    for (int j = 0; j < 32; ++j) x[b * 32 + j] = unit(rng) * scale;
  }
  // One block of zeros, one with a single non-zero.
  std::fill(x.begin(), x.begin() + 32, 0.0f);
  std::fill(x.begin() + 32, x.begin() + 64, 0.0f);
  x[40] = -3.5f;

  std::string bytes;
  FromFloat32(GgmlType::kQ8_0, x.data(), x.size(), &bytes);
  ASSERT_EQ(bytes.size(), kBlocks * 34u);
  std::vector<float> y(x.size());
  ToFloat32(GgmlType::kQ8_0, reinterpret_cast<const uint8_t*>(bytes.data()), x.size(), y.data());

  double worst_ratio = 0.0;  // max |x - y| / (max|x| / 254) over blocks
  for (int b = 0; b < kBlocks; ++b) {
    const float* xb = &x[b * 32];
    const char* block = bytes.data() + b * 34;
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(xb[j]));
    // Layout: fp16 scale max|x| / 127, then 32 int8 values round(x / scale).
    const uint16_t d = Get<uint16_t>(std::string(block, 34), 0);
    ASSERT_EQ(d, FloatToHalf(amax / 127.0f)) << b;
    const float scale = HalfToFloat(d);
    int max_q = 0;
    for (int j = 0; j < 32; ++j) {
      const int q = static_cast<int8_t>(block[2 + j]);
      max_q = std::max(max_q, std::abs(q));
      ASSERT_EQ(y[b * 32 + j], q * scale) << b << "," << j;
      if (amax > 0) {  // ggml's quantize_row_q8_0_ref: round(x · (1 / d))
        ASSERT_EQ(q, static_cast<int>(std::roundf(xb[j] * (1.0f / (amax / 127.0f))))) << b << "," << j;
      }
      const float err = std::fabs(xb[j] - y[b * 32 + j]);
      // Half a step of the exact scale, plus the fp16 rounding of the scale (2^-11
      // relative) times at most 127 steps.
      ASSERT_LE(err, amax / 254.0f + 127.0f * std::fabs(scale - amax / 127.0f) + amax * 1e-6f)
          << b << "," << j;
      if (amax > 0) worst_ratio = std::max(worst_ratio, double{err} / (amax / 254.0));
    }
    if (amax > 0) {
      EXPECT_EQ(max_q, 127) << b;
    }
  }
  EXPECT_TRUE(std::all_of(y.begin(), y.begin() + 32, [](float v) { return v == 0.0f; }));
  // The block's maximum becomes ±127 steps of the fp16 scale: off by its rounding only.
  EXPECT_EQ(y[40], -127 * HalfToFloat(FloatToHalf(3.5f / 127)));
  EXPECT_NEAR(y[40], -3.5f, 3.5f * std::ldexp(1.0f, -11));
  // As in ggml, a block so small that its scale underflows fp16 (max|x| below
  // 127 · 2^-25 ≈ 3.8e-6) decodes to zeros.
  const std::vector<float> tiny(32, 1e-6f);
  std::string tiny_bytes;
  FromFloat32(GgmlType::kQ8_0, tiny.data(), 32, &tiny_bytes);
  std::vector<float> tiny_out(32, -1.0f);
  ToFloat32(GgmlType::kQ8_0, reinterpret_cast<const uint8_t*>(tiny_bytes.data()), 32, tiny_out.data());
  EXPECT_EQ(tiny_out, std::vector<float>(32, 0.0f));
  std::cerr << "q8_0: worst |x - y| is " << worst_ratio << " x max|x|/254\n";
  // The fp16 scale costs at most 127 · 2^-11 ≈ 6% of max|x|/127, i.e. 12% of max|x|/254.
  EXPECT_LE(worst_ratio, 1.13);
}

// `llama` as another architecture: its keys renamed, and the tensors that architecture
// requires added (Qwen 2's q/k/v biases, Qwen 3's q/k norms), with small values.
GgufBuilder AsArchitecture(const GgufBuilder& llama, const std::string& arch, const ModelFile& model) {
  const ModelConfig& c = model.config;
  GgufBuilder b = llama;
  for (auto& [key, value] : b.kvs) {
    if (key.rfind("llama.", 0) == 0) key = arch + key.substr(5);
  }
  b.Set("general.architecture", ValueString(arch));
  const auto vector = [&b](const std::string& name, int n, float value) {
    b.tensors.push_back({name, {static_cast<uint64_t>(n)}, 0,
                         FloatBytes(std::vector<float>(n, value).data(), n), std::nullopt});
  };
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    if (arch == "qwen2") {
      vector(p + "attn_q.bias", c.q_dim(), 0.01f);
      vector(p + "attn_k.bias", c.kv_dim(), 0.02f);
      vector(p + "attn_v.bias", c.kv_dim(), 0.03f);
    } else if (arch == "qwen3") {
      vector(p + "attn_q_norm.weight", c.head_dim, 1.1f);
      vector(p + "attn_k_norm.weight", c.head_dim, 0.9f);
    }
  }
  return b;
}

// ---------------------------------------------------------------------------------------
// Broken files.

// A broken file to load later, with the phrases its error must contain. All are written
// first so that the memory measured while loading them is the reader's alone.
struct BadFile {
  std::string path;
  std::vector<std::string> phrases;
};

TEST_F(gguf, QwenArchitecturesMapTheirOptions) {
  const GgufBuilder valid = ValidBuilder(*bin_model_, *tokenizer_);
  for (const char* arch : {"qwen2", "qwen3"}) {
    SCOPED_TRACE(arch);
    const std::string file = testing::WriteFile(dir_, std::string(arch) + ".gguf",
                                                AsArchitecture(valid, arch, *bin_model_).Build());
    const ModelOr model = LoadModel(file);
    ASSERT_TRUE(model.ok()) << model.status();
    const ModelConfig& c = (*model)->config;
    EXPECT_EQ((*model)->format, std::string("GGUF v3 (") + arch + ")");
    EXPECT_EQ(c.rope_layout, RopeLayout::kHalfSplit);
    EXPECT_EQ(c.qkv_bias, std::string(arch) == "qwen2");
    EXPECT_EQ(c.qk_norm, std::string(arch) == "qwen3");
    const LayerWeights& l1 = (*model)->weights.layers[1];
    if (c.qkv_bias) {
      EXPECT_EQ(l1.bq[c.q_dim() - 1], 0.01f);
      EXPECT_EQ(l1.bk[0], 0.02f);
      EXPECT_EQ(l1.bv[c.kv_dim() - 1], 0.03f);
    } else {
      EXPECT_EQ(l1.q_norm[c.head_dim - 1], 1.1f);
      EXPECT_EQ(l1.k_norm[0], 0.9f);
    }
    EXPECT_EQ(testing::AllLogits(**model, {1, 5, 9}).size(), 3u * c.vocab_size);
    // explain shows what the architecture adds, with the forward pass's numbers.
    const testing::RunResult explain =
        testing::RunToyllm({"explain", "-m", file, "-p", "Once upon a time", "--layer", "1", "--head", "3"});
    ASSERT_TRUE(testing::Succeeds(explain));
    EXPECT_NE(explain.out.find("pairs (0, 4), (1, 5), … (the two halves, NeoX)"), std::string::npos);
    if (c.qkv_bias) {
      EXPECT_NE(explain.out.find("q = h·W_Q + b_Q, k = h·W_K + b_K, v = h·W_V + b_V"), std::string::npos);
      EXPECT_NE(explain.out.find("bias       q [0.01, 0.01"), std::string::npos);
    } else {
      EXPECT_NE(explain.out.find("q/k norm: each head's q and k RMS-normalised before RoPE"), std::string::npos);
      EXPECT_EQ(explain.out.find("b_Q"), std::string::npos);
    }
    // The other inspection commands are observers of the same pass: they run as they are.
    const std::string out = dir_ + "/" + arch;
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"attention", "-m", file, "-p", "Once upon a time", "-o", out + "_maps"},
          {"lens", "-m", file, "-p", "Once upon a time"},
          {"logits", "-m", file, "-p", "Once upon a time", "--hidden", out + "_hidden.npy", "-o", out + "_logits.npy"},
          {"generate", "-m", file, "-p", "Once upon a time", "-n", "3", "--temp", "0", "--dump-attention",
           out + "_generate_maps"}}) {
      EXPECT_TRUE(testing::Succeeds(testing::RunToyllm(command))) << testing::QuotedArgs(command);
    }
    EXPECT_TRUE(testing::PathExists(out + "_maps/attention.npy"));
    EXPECT_TRUE(testing::PathExists(out + "_hidden.npy"));
    EXPECT_TRUE(testing::PathExists(out + "_generate_maps/index.html"));
  }
  GgufBuilder b = valid;
  const std::vector<float> factors = {1.0f, 1.5f, 4.0f, 8.0f};
  b.tensors.push_back({"rope_freqs.weight", {4}, 0, FloatBytes(factors.data(), 4), std::nullopt});
  const std::string file = testing::WriteFile(dir_, "rope_freqs.gguf", b.Build());
  const ModelOr model = LoadModel(file);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->config.rope_freq_factors, factors);
  EXPECT_EQ((*model)->config.rope_layout, RopeLayout::kInterleaved);
  // Linear RoPE scaling divides every position by its factor, as llama.cpp reads the keys:
  // the type defaults to linear, and the older key rope.scale_linear still counts.
  b.Set("llama.rope.scaling.type", ValueString("linear"));
  b.Set("llama.rope.scaling.factor", ValueF32(2.0f));
  ModelOr scaled = LoadModel(testing::WriteFile(dir_, "rope_linear.gguf", b.Build()));
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  EXPECT_EQ((*scaled)->config.rope_freq_factors, (std::vector<float>{2.0f, 3.0f, 8.0f, 16.0f}));
  GgufBuilder old_key = valid;
  old_key.Set("llama.rope.scale_linear", ValueF32(4.0f));
  scaled = LoadModel(testing::WriteFile(dir_, "rope_scale_linear.gguf", old_key.Build()));
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  EXPECT_EQ((*scaled)->config.rope_freq_factors, std::vector<float>(4, 4.0f));
  old_key.Set("llama.rope.scaling.type", ValueString("none"));
  scaled = LoadModel(testing::WriteFile(dir_, "rope_scaling_none.gguf", old_key.Build()));
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  EXPECT_TRUE((*scaled)->config.rope_freq_factors.empty());
}

#define EXPECT_LOAD_ERROR(name, bytes, ...) bad_files.push_back({testing::WriteFile(dir_, name, bytes), {__VA_ARGS__}})

// Arrays of no elements are valid GGUF (the fuzzer found the float one read through a null
// pointer): each getter returns an empty vector.
TEST_F(gguf, EmptyArraysReadAsEmpty) {
  GgufBuilder b = ValidBuilder(*bin_model_, *tokenizer_);
  b.Set("empty.floats", ArrayHeader(kF32, 0));
  b.Set("empty.ints", ArrayHeader(kU8, 0));
  b.Set("empty.strings", ArrayHeader(kString, 0));
  absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(testing::WriteFile(dir_, "empty_arrays.gguf", b.Build()));
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<GgufFile> g = GgufFile::Parse(**file);
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::vector<float>> floats = g->GetFloatArray("empty.floats");
  ASSERT_TRUE(floats.ok()) << floats.status();
  EXPECT_TRUE(floats->empty());
  absl::StatusOr<std::vector<int32_t>> ints = g->GetIntArray("empty.ints");
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_TRUE(ints->empty());
  absl::StatusOr<std::vector<std::string>> strings = g->GetStringArray("empty.strings");
  ASSERT_TRUE(strings.ok()) << strings.status();
  EXPECT_TRUE(strings->empty());
}

TEST_F(gguf, CorruptedFilesFailCleanlyWithoutAllocating) {
  const std::string written = testing::ReadFile(Export(GgmlType::kF32, "valid.gguf"));
  ASSERT_GT(written.size(), 1000u);
  const GgufBuilder valid = ValidBuilder(*bin_model_, *tokenizer_);
  std::vector<BadFile> bad_files;

  // Header.
  EXPECT_LOAD_ERROR("empty.gguf", "", "the file is empty");
  EXPECT_LOAD_ERROR("magic_only.gguf", written.substr(0, 4), "bad GGUF at byte 4", "the version",
                    "runs past the end of the file");
  std::string v1 = written;
  v1.replace(4, 4, Raw<uint32_t>(1));
  EXPECT_LOAD_ERROR("version1.gguf", v1, "version 1 is not supported");
  std::string v4 = written;
  v4.replace(4, 4, Raw<uint32_t>(4));
  EXPECT_LOAD_ERROR("version4.gguf", v4, "version 4 is not supported");
  std::string big_endian = written;
  big_endian.replace(4, 4, std::string("\0\0\0\3", 4));
  EXPECT_LOAD_ERROR("big_endian.gguf", big_endian, "big-endian");
  GgufBuilder b = valid;
  b.tensor_count = uint64_t{1} << 62;
  EXPECT_LOAD_ERROR("huge_tensor_count.gguf", b.Build(), "4611686018427387904 tensors",
                    "cannot fit in the file");
  b = valid;
  b.kv_count = ~uint64_t{0};
  EXPECT_LOAD_ERROR("huge_kv_count.gguf", b.Build(), "18446744073709551615 metadata entries",
                    "cannot fit in the file");
  b = valid;
  b.kv_count = b.kvs.size() + 1;  // one more than there are: the first tensor info is read as one
  EXPECT_LOAD_ERROR("kv_count_plus_one.gguf", b.Build(), "bad GGUF");

  // Metadata values.
  b = valid;
  b.Set("general.name", Raw<uint32_t>(kString) + Raw<uint64_t>(uint64_t{1} << 40) + "stories");
  EXPECT_LOAD_ERROR("string_past_end.gguf", b.Build(), "a string of 1099511627776 bytes",
                    "runs past the end of the file", "key 'general.name'");
  b = valid;
  b.Set("tokenizer.ggml.scores", ArrayHeader(kF32, uint64_t{1} << 60) + Raw(1.0f));
  EXPECT_LOAD_ERROR("array_count_2_60.gguf", b.Build(), "an array of 1152921504606846976 elements",
                    "cannot fit in the file", "key 'tokenizer.ggml.scores'");
  b = valid;
  b.Set("tokenizer.ggml.tokens", ArrayHeader(kString, uint64_t{1} << 60) + GgufString("a"));
  EXPECT_LOAD_ERROR("string_array_count_2_60.gguf", b.Build(), "an array of 1152921504606846976 elements",
                    "cannot fit in the file");
  b = valid;
  b.Set("nested", ArrayHeader(kArray, 1) + Raw<uint32_t>(kU8) + Raw<uint64_t>(1) + "x");
  EXPECT_LOAD_ERROR("nested_array.gguf", b.Build(), "nested arrays are not supported", "key 'nested'");
  b = valid;
  b.Set("strange", Raw<uint32_t>(13) + Raw<uint32_t>(0));
  EXPECT_LOAD_ERROR("value_type_13.gguf", b.Build(), "unknown value type 13", "key 'strange'");
  b = valid;
  b.Set("strange", ArrayHeader(99, 1) + Raw<uint32_t>(0));
  EXPECT_LOAD_ERROR("element_type_99.gguf", b.Build(), "unknown array element type 99");
  b = valid;
  b.kvs.emplace_back("general.name", ValueString("again"));
  EXPECT_LOAD_ERROR("duplicate_key.gguf", b.Build(), "duplicate key 'general.name'");
  b = valid;
  b.kvs.insert(b.kvs.begin(), {std::string(70000, 'k'), ValueU32(1)});
  EXPECT_LOAD_ERROR("key_70000_bytes.gguf", b.Build(), "a metadata key is 70000 bytes long, more than 65535");

  // Tensor descriptions.
  b = valid;
  b.tensors.push_back(b.T("blk.0.attn_q.weight"));
  EXPECT_LOAD_ERROR("duplicate_tensor.gguf", b.Build(), "duplicate tensor 'blk.0.attn_q.weight'");
  b = valid;
  b.T("output_norm.weight").name = std::string(64, 'n');
  EXPECT_LOAD_ERROR("name_64_bytes.gguf", b.Build(), "a tensor name is 64 bytes long, more than 63");
  b = valid;
  b.T("output_norm.weight").dims = {};
  EXPECT_LOAD_ERROR("n_dims_0.gguf", b.Build(), "tensor 'output_norm.weight' has 0 dimensions");
  b = valid;
  b.T("token_embd.weight").dims = {64, 512, 1, 1, 1};
  EXPECT_LOAD_ERROR("n_dims_5.gguf", b.Build(), "tensor 'token_embd.weight' has 5 dimensions");
  b = valid;
  b.T("token_embd.weight").dims = {64, 0};
  EXPECT_LOAD_ERROR("dim_0.gguf", b.Build(), "tensor 'token_embd.weight' has an absurd dimension 0");
  b = valid;
  b.T("token_embd.weight").dims = {64, uint64_t{1} << 50};
  EXPECT_LOAD_ERROR("dim_2_50.gguf", b.Build(), "tensor 'token_embd.weight' has an absurd dimension 1125899906842624");
  b = valid;
  b.T("token_embd.weight").dims = {uint64_t{1} << 30, uint64_t{1} << 30};  // product 2^60
  EXPECT_LOAD_ERROR("elements_2_60.gguf", b.Build(), "absurd dimension");
  b = valid;
  b.T("blk.1.attn_k.weight").type = 23;  // IQ4_XS, an I-quant
  EXPECT_LOAD_ERROR("type_iq4_xs.gguf", b.Build(), "tensor 'blk.1.attn_k.weight' has ggml type 23 (iq4_xs)",
                    "toyllm does not read (it reads f32, f16, bf16, q4_0");
  b = valid;
  b.T("blk.1.attn_k.weight").type = 35;  // TQ2_0, ternary
  EXPECT_LOAD_ERROR("type_tq2_0.gguf", b.Build(), "has ggml type 35 (tq2_0)", "toyllm does not read");
  b = valid;
  b.T("blk.1.attn_k.weight").type = 12;  // Q4_K: 256-weight blocks, rows of 64
  EXPECT_LOAD_ERROR("q4_k_partial_blocks.gguf", b.Build(),
                    "tensor 'blk.1.attn_k.weight' has rows of 64 weights, not whole q4_k blocks");
  {
    // blk.0.attn_q as Q4_0 blocks (64 × 64 weights: 128 blocks of 18 bytes).
    std::vector<float> values(64 * 64, 0.25f);
    std::string q4_0;
    FromFloat32(GgmlType::kQ4_0, values.data(), static_cast<int64_t>(values.size()), &q4_0);
    ASSERT_EQ(q4_0.size(), 128u * 18);
    b = valid;
    b.T("blk.0.attn_q.weight").type = 3;  // claims Q4_1 (20-byte blocks) for Q4_0's bytes
    b.T("blk.0.attn_q.weight").data = q4_0;
    EXPECT_LOAD_ERROR("q4_1_size.gguf", b.Build(), "tensor 'blk.0.attn_k.weight'", "overlaps tensor 'blk.0.attn_q.weight'");
    b = valid;
    b.T("blk.0.attn_q.weight").type = 2;
    b.T("blk.0.attn_q.weight").data = q4_0;
    const uint16_t nan = 0x7e00;
    std::memcpy(&b.T("blk.0.attn_q.weight").data[5 * 18], &nan, 2);
    EXPECT_LOAD_ERROR("q4_0_nan_scale.gguf", b.Build(),
                      "tensor 'blk.0.attn_q.weight' block 5 has a non-finite scale (NaN or infinity)");
  }
  b = valid;
  b.T("blk.0.ffn_down.weight").type = 8;  // q8_0 with rows of 172
  EXPECT_LOAD_ERROR("q8_0_partial_blocks.gguf", b.Build(),
                    "tensor 'blk.0.ffn_down.weight' has rows of 172 weights, not whole q8_0 blocks");
  b = valid;
  b.T("blk.0.attn_norm.weight").offset = b.tensors[0].data.size() + 4;
  EXPECT_LOAD_ERROR("misaligned_offset.gguf", b.Build(),
                    "tensor 'blk.0.attn_norm.weight' is at offset 131076, not a multiple of the alignment 32");
  b = valid;
  b.T("blk.0.attn_norm.weight").offset = uint64_t{1} << 62;
  EXPECT_LOAD_ERROR("offset_2_62.gguf", b.Build(), "tensor 'blk.0.attn_norm.weight'",
                    "runs past the end of the file");
  EXPECT_LOAD_ERROR("truncated_by_1.gguf", written.substr(0, written.size() - 1),
                    "tensor 'output_norm.weight' (256 bytes at data offset",
                    "runs past the end of the file (" + std::to_string(written.size() - 1) + " bytes; truncated?)");
  EXPECT_LOAD_ERROR("header_cut.gguf", written.substr(0, 3000),
                    "an array of 512 elements cannot fit in the file (key 'tokenizer.ggml.tokens')");

  // general.alignment.
  b = valid;
  b.Set("general.alignment", ValueU32(48));
  EXPECT_LOAD_ERROR("alignment_48.gguf", b.Build(), "general.alignment must be a uint32 power of two");
  b = valid;
  b.Set("general.alignment", ValueU32(0));
  EXPECT_LOAD_ERROR("alignment_0.gguf", b.Build(), "general.alignment must be a uint32 power of two");
  b = valid;
  b.Set("general.alignment", ValueU64(32));
  EXPECT_LOAD_ERROR("alignment_u64.gguf", b.Build(), "general.alignment must be a uint32 power of two");
  b = valid;  // a valid alignment of 64 that an offset does not follow
  b.Set("general.alignment", ValueU32(64));
  b.T("blk.0.attn_norm.weight").offset = b.tensors[0].data.size() + 32;
  EXPECT_LOAD_ERROR("alignment_64_layout_32.gguf", b.Build(), "not a multiple of the alignment 64");

  // llama metadata.
  b = valid;
  b.Remove("general.architecture");
  EXPECT_LOAD_ERROR("no_architecture.gguf", b.Build(), "metadata key 'general.architecture' is missing");
  b = valid;
  b.Set("general.architecture", ValueString("gpt2"));
  {
    const std::string file = testing::WriteFile(dir_, "gpt2.gguf", b.Build());
    const ModelOr result = LoadModel(file);
    testing::ExpectError(result, file, {"architecture 'gpt2' is not supported (toyllm runs llama, qwen2, qwen3)"});
    EXPECT_EQ(result.status().code(), absl::StatusCode::kUnimplemented);
  }
  b = valid;
  b.Set("general.architecture", ValueU32(7));
  EXPECT_LOAD_ERROR("architecture_u32.gguf", b.Build(), "metadata key 'general.architecture' is not a string");
  for (const char* key : {"llama.embedding_length", "llama.feed_forward_length", "llama.block_count",
                          "llama.attention.head_count", "llama.context_length"}) {
    b = valid;
    b.Remove(key);
    EXPECT_LOAD_ERROR(std::string("no_") + key + ".gguf", b.Build(),
                      std::string("metadata key '") + key + "' is missing");
  }
  b = valid;
  b.Set("llama.block_count", ValueString("five"));
  EXPECT_LOAD_ERROR("block_count_string.gguf", b.Build(), "metadata key 'llama.block_count' is not an integer");
  b = valid;
  b.Set("llama.block_count", ValueU64(~uint64_t{0}));
  EXPECT_LOAD_ERROR("block_count_huge.gguf", b.Build(), "llama.block_count", "is not an integer");
  b = valid;
  b.Set("llama.block_count", ValueU32(1 << 20));
  EXPECT_LOAD_ERROR("block_count_2_20.gguf", b.Build(), "bad metadata", "n_layers = 1048576 is outside");
  b = valid;
  b.Set("llama.attention.head_count_kv", ValueU32(3));
  EXPECT_LOAD_ERROR("kv_heads_3.gguf", b.Build(),
                    "llama.attention.head_count_kv = 3 does not divide llama.attention.head_count = 8");
  b = valid;
  b.Set("llama.attention.head_count", ValueU32(6));
  b.Set("llama.attention.head_count_kv", ValueU32(6));
  EXPECT_LOAD_ERROR("heads_6.gguf", b.Build(), "llama.embedding_length = 64 is not a multiple of llama.attention.head_count = 6");
  b = valid;
  b.Set("llama.rope.dimension_count", ValueU32(4));
  EXPECT_LOAD_ERROR("partial_rope.gguf", b.Build(), "RoPE over 4 of 8 head dimensions is not supported");
  b = valid;
  b.Set("llama.block_count", ValueU32(6));
  EXPECT_LOAD_ERROR("block_count_6.gguf", b.Build(), "tensor 'blk.5.attn_norm.weight' is missing");

  // Tensors that do not fit the metadata.
  b = valid;
  b.T("blk.2.attn_q.weight").dims = {64, 32};
  b.T("blk.2.attn_q.weight").data.resize(64 * 32 * 4);
  EXPECT_LOAD_ERROR("wrong_shape.gguf", b.Build(),
                    "tensor 'blk.2.attn_q.weight' has dims [64, 32], expected [64, 64] from the metadata");
  b = valid;
  b.T("blk.2.ffn_down.weight").dims = {64, 172};  // w2 transposed: same size, wrong order
  EXPECT_LOAD_ERROR("transposed.gguf", b.Build(), "tensor 'blk.2.ffn_down.weight' has dims [64, 172], expected [172, 64]");
  b = valid;
  b.T("token_embd.weight").dims = {64 * 512};
  EXPECT_LOAD_ERROR("embedding_1d.gguf", b.Build(), "tensor 'token_embd.weight' is missing or not a matrix");
  b = valid;
  b.tensors.erase(b.tensors.begin() + 3);  // blk.0.attn_k.weight
  EXPECT_LOAD_ERROR("missing_tensor.gguf", b.Build(), "tensor 'blk.0.attn_k.weight' is missing");

  // Tokenizer.
  b = valid;
  b.Set("tokenizer.ggml.bos_token_id", ValueU32(600));
  EXPECT_LOAD_ERROR("bos_600.gguf", b.Build(), "tokenizer.ggml.bos_token_id = 600 is outside the 512 tokens");
  b = valid;
  b.Set("tokenizer.ggml.eos_token_id", ValueU32(512));
  EXPECT_LOAD_ERROR("eos_512.gguf", b.Build(), "tokenizer.ggml.eos_token_id = 512 is outside the 512 tokens");
  b = valid;
  b.Set("tokenizer.ggml.unknown_token_id", Raw<uint32_t>(kI32) + Raw<int32_t>(-7));
  EXPECT_LOAD_ERROR("unk_negative.gguf", b.Build(), "tokenizer.ggml.unknown_token_id = -7 is outside");
  b = valid;
  b.Set("tokenizer.ggml.model", ValueString("bert"));
  EXPECT_LOAD_ERROR("tokenizer_bert.gguf", b.Build(), "tokenizer.ggml.model 'bert' is not supported");
  b = valid;
  b.Set("tokenizer.ggml.model", ValueString("gpt2"));  // byte-level BPE needs its merges
  EXPECT_LOAD_ERROR("tokenizer_gpt2.gguf", b.Build(), "metadata key 'tokenizer.ggml.merges' is missing");

  // What the other architectures add: Qwen 2's q/k/v biases, Qwen 3's q/k norms, Llama
  // 3.1's frequency factors.
  const GgufBuilder qwen2 = AsArchitecture(valid, "qwen2", *bin_model_);
  b = qwen2;
  b.tensors.erase(std::find_if(b.tensors.begin(), b.tensors.end(),
                               [](const auto& t) { return t.name == "blk.1.attn_v.bias"; }));
  EXPECT_LOAD_ERROR("qwen2_no_bias.gguf", b.Build(), "tensor 'blk.1.attn_v.bias' is missing");
  b = qwen2;
  b.T("blk.0.attn_k.bias").dims = {16};
  EXPECT_LOAD_ERROR("qwen2_bias_shape.gguf", b.Build(),
                    "tensor 'blk.0.attn_k.bias' has dims [16], expected [32]");
  b = qwen2;
  b.Set("qwen2.attention.head_count_kv", ValueU32(5));
  EXPECT_LOAD_ERROR("qwen2_kv_heads_5.gguf", b.Build(),
                    "qwen2.attention.head_count_kv = 5 does not divide qwen2.attention.head_count = 8");
  b = AsArchitecture(valid, "qwen3", *bin_model_);
  b.tensors.erase(std::find_if(b.tensors.begin(), b.tensors.end(),
                               [](const auto& t) { return t.name == "blk.0.attn_k_norm.weight"; }));
  EXPECT_LOAD_ERROR("qwen3_no_k_norm.gguf", b.Build(), "tensor 'blk.0.attn_k_norm.weight' is missing");
  b = valid;
  b.tensors.push_back({"rope_freqs.weight", {3}, 0, FloatBytes(std::vector<float>{1, 2, 3}.data(), 3), std::nullopt});
  EXPECT_LOAD_ERROR("rope_freqs_3.gguf", b.Build(), "tensor 'rope_freqs.weight' has dims [3], expected [4]");
  b = valid;
  b.tensors.push_back({"rope_freqs.weight", {4}, 0, FloatBytes(std::vector<float>{1, 0, 3, 4}.data(), 4), std::nullopt});
  EXPECT_LOAD_ERROR("rope_freqs_0.gguf", b.Build(), "tensor 'rope_freqs.weight' holds 0");
  b = valid;
  b.Set("llama.rope.scaling.type", ValueString("yarn"));
  EXPECT_LOAD_ERROR("rope_yarn.gguf", b.Build(), "llama.rope.scaling.type 'yarn' is not supported (toyllm applies none or linear)");
  b = valid;
  b.Set("llama.rope.scaling.factor", ValueF32(-2.0f));
  EXPECT_LOAD_ERROR("rope_factor_negative.gguf", b.Build(), "llama.rope.scaling.factor = -2 is not a positive factor");
  // Tensors the forward pass would not read: an output bias; q/k/v biases in a qwen3 file.
  b = valid;
  b.tensors.push_back({"blk.0.attn_output.bias", {64}, 0, FloatBytes(std::vector<float>(64, 5.0f).data(), 64), std::nullopt});
  EXPECT_LOAD_ERROR("output_bias.gguf", b.Build(), "tensor 'blk.0.attn_output.bias' is not part of the model toyllm runs");
  b = AsArchitecture(valid, "qwen3", *bin_model_);
  b.tensors.push_back({"blk.1.attn_q.bias", {64}, 0, FloatBytes(std::vector<float>(64, 0.5f).data(), 64), std::nullopt});
  EXPECT_LOAD_ERROR("qwen3_q_bias.gguf", b.Build(), "tensor 'blk.1.attn_q.bias' is not part of the model toyllm runs");
  b = valid;
  b.Set("tokenizer.ggml.scores", ValueI32s({1, 2, 3}));
  EXPECT_LOAD_ERROR("scores_int.gguf", b.Build(), "metadata key 'tokenizer.ggml.scores' is not an array of float32");

  // Not even GGUF: a .gguf file without the magic is reported as a damaged GGUF (any other
  // name would be taken for llama2.c's legacy format, which has no magic).
  std::string bad_magic = written;
  bad_magic[3] = 'X';
  {
    const std::string file = testing::WriteFile(dir_, "bad_magic.gguf", bad_magic);
    testing::ExpectError(LoadModel(file), file, {"bad GGUF", "does not start with 'GGUF'"});
    absl::StatusOr<std::unique_ptr<MappedFile>> mapped = MappedFile::Open(file);
    ASSERT_TRUE(mapped.ok());
    absl::StatusOr<GgufFile> parsed = GgufFile::Parse(**mapped);
    ASSERT_FALSE(parsed.ok());
    EXPECT_NE(parsed.status().message().find(file), std::string::npos);
    EXPECT_NE(parsed.status().message().find("does not start with 'GGUF'"), std::string::npos)
        << parsed.status();
  }

  ASSERT_GE(bad_files.size(), 55u);
  const int64_t rss_before = testing::PeakRssKiB();
  for (const BadFile& bad : bad_files) {
    SCOPED_TRACE(bad.path);
    testing::ExpectError(LoadModel(bad.path), bad.path, bad.phrases);
  }
  EXPECT_LT(testing::PeakRssKiB() - rss_before, 64 * 1024) << "KiB of peak memory for bad files";
}

}  // namespace
}  // namespace toyllm
