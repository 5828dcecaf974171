// The llama2.c reader (LoadModel) on the real stories260K checkpoint, on its version-1
// re-export, and on broken files derived from it: every bad file must give a clean error
// that names the file and the problem, never a crash or a huge allocation.
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/model_file.h"
#include "tests/test_env.h"
#include "tests/test_util.h"

namespace toyllm {
namespace {

// ---------------------------------------------------------------------------------------
// Byte helpers. The legacy header is seven int32 at the start of the file, in this order.
enum HeaderField { kDim, kHidden, kLayers, kHeads, kKvHeads, kVocab, kSeqLen };

int32_t GetInt(const std::string& bytes, size_t offset) {
  int32_t v;
  std::memcpy(&v, bytes.data() + offset, sizeof(v));
  return v;
}

void PutInt(std::string& bytes, size_t offset, int32_t v) {
  bytes.replace(offset, sizeof(v), reinterpret_cast<const char*>(&v), sizeof(v));
}

void AppendInt(std::string& bytes, int32_t v) {
  bytes.append(reinterpret_cast<const char*>(&v), sizeof(v));
}

int32_t Field(const std::string& legacy, HeaderField field) {
  return GetInt(legacy, field * sizeof(int32_t));
}

// The legacy bytes with one header field replaced.
std::string WithField(std::string legacy, HeaderField field, int32_t value) {
  PutInt(legacy, field * sizeof(int32_t), value);
  return legacy;
}

// ---------------------------------------------------------------------------------------
// Converting the legacy file to llama2.c's version-1 export (export.py's version1_export).

constexpr uint32_t kMagic = 0x616b3432;  // "ak42"
constexpr size_t kV1HeaderBytes = 256;
constexpr size_t kV1VersionOffset = 4;
constexpr size_t kV1ParamsOffset = 8;       // the seven int32, in HeaderField order
constexpr size_t kV1SharedFlagOffset = 36;  // one byte after them

// One weight array of a file: where it starts and how many bytes it has.
struct Block {
  size_t offset = 0;
  size_t bytes = 0;
};

// The arrays of a legacy file, each holding one kind for all layers (../shared/README.md).
struct LegacyLayout {
  Block embedding, attn_norm, wq, wk, wv, wo, ffn_norm, w1, w2, w3, final_norm, rope, classifier;
  size_t end = 0;
};

LegacyLayout LayoutOf(const std::string& legacy) {
  const size_t dim = Field(legacy, kDim), hidden = Field(legacy, kHidden),
               layers = Field(legacy, kLayers), heads = Field(legacy, kHeads),
               kv_heads = Field(legacy, kKvHeads), seq_len = Field(legacy, kSeqLen);
  const int32_t vocab = Field(legacy, kVocab);
  const size_t vocab_size = vocab < 0 ? -static_cast<int64_t>(vocab) : vocab;
  const size_t head_dim = dim / heads, kv_dim = kv_heads * head_dim;
  LegacyLayout l;
  size_t offset = 7 * sizeof(int32_t);
  auto take = [&offset](size_t floats) {
    Block b{offset, floats * sizeof(float)};
    offset += b.bytes;
    return b;
  };
  l.embedding = take(vocab_size * dim);
  l.attn_norm = take(layers * dim);
  l.wq = take(layers * dim * dim);
  l.wk = take(layers * kv_dim * dim);
  l.wv = take(layers * kv_dim * dim);
  l.wo = take(layers * dim * dim);
  l.ffn_norm = take(layers * dim);
  l.w1 = take(layers * hidden * dim);
  l.w2 = take(layers * dim * hidden);
  l.w3 = take(layers * hidden * dim);
  l.final_norm = take(dim);
  l.rope = take(seq_len * head_dim);  // freq_cis_real and _imag, [seq_len, head_dim / 2] each
  l.classifier = vocab < 0 ? take(vocab_size * dim) : l.embedding;
  l.end = offset;
  return l;
}

// The version-1 file for a legacy one: a 256-byte header (magic, version, the seven
// parameters with a positive vocab_size, a shared-classifier flag, zero padding), then the
// norms, the embedding, the matrices and, unless shared, the classifier. With
// `shared = false` the classifier is written out even when the legacy file ties it.
std::string LegacyToVersion1(const std::string& legacy, bool shared) {
  const LegacyLayout l = LayoutOf(legacy);
  EXPECT_EQ(l.end, legacy.size()) << "the legacy file does not have the layout its header says";
  std::string out;
  AppendInt(out, static_cast<int32_t>(kMagic));
  AppendInt(out, 1);
  for (int field = kDim; field <= kSeqLen; ++field) {
    const int32_t v = Field(legacy, static_cast<HeaderField>(field));
    AppendInt(out, field == kVocab && v < 0 ? -v : v);
  }
  EXPECT_EQ(out.size(), kV1SharedFlagOffset);
  out.push_back(shared ? 1 : 0);
  out.resize(kV1HeaderBytes, '\0');
  for (const Block& b : {l.attn_norm, l.ffn_norm, l.final_norm, l.embedding, l.wq, l.wk, l.wv,
                         l.wo, l.w1, l.w2, l.w3}) {
    out.append(legacy, b.offset, b.bytes);
  }
  if (!shared) out.append(legacy, l.classifier.offset, l.classifier.bytes);
  return out;
}

// llama2.c's version-2 export (export.py's version2_export, runq.c's reader): the header
// adds an unaligned int32 group size after the shared flag; the norms stay float32; each
// matrix becomes its int8 values, then one float32 scale (max|w| / 127) per group.
std::string LegacyToVersion2(const std::string& legacy, int group_size) {
  const LegacyLayout l = LayoutOf(legacy);
  std::string out = LegacyToVersion1(legacy, /*shared=*/true).substr(0, kV1HeaderBytes);
  PutInt(out, kV1VersionOffset, 2);
  std::memcpy(&out[kV1SharedFlagOffset + 1], &group_size, sizeof(group_size));
  for (const Block& b : {l.attn_norm, l.ffn_norm, l.final_norm}) out.append(legacy, b.offset, b.bytes);
  // Each layer's matrix is its own tensor: its values, then its scales.
  const size_t layers = Field(legacy, kLayers);
  std::vector<Block> matrices = {l.embedding};
  for (const Block& kind : {l.wq, l.wk, l.wv, l.wo, l.w1, l.w2, l.w3}) {
    for (size_t layer = 0; layer < layers; ++layer) {
      matrices.push_back({kind.offset + layer * kind.bytes / layers, kind.bytes / layers});
    }
  }
  for (const Block& b : matrices) {
    std::vector<float> w(b.bytes / sizeof(float));
    std::memcpy(w.data(), legacy.data() + b.offset, b.bytes);
    std::string scales;
    for (size_t g = 0; g < w.size() / group_size; ++g) {
      float wmax = 0.0f;
      for (int i = 0; i < group_size; ++i) wmax = std::max(wmax, std::fabs(w[g * group_size + i]));
      const float scale = wmax / 127.0f;
      for (int i = 0; i < group_size; ++i) {
        out.push_back(static_cast<char>(std::lround(w[g * group_size + i] / scale)));
      }
      scales.append(reinterpret_cast<const char*>(&scale), sizeof(scale));
    }
    out.append(scales);
  }
  return out;
}

// The legacy file with its classifier stored separately (negative vocab_size, the
// embedding's bytes appended), which must compute exactly what the tied one does.
std::string UntiedLegacy(const std::string& legacy) {
  const LegacyLayout l = LayoutOf(legacy);
  std::string out = WithField(legacy, kVocab, -Field(legacy, kVocab));
  out.append(legacy, l.embedding.offset, l.embedding.bytes);
  return out;
}

// A short prompt, whose logits at every position are compared.
const std::vector<int> kTokens = testing::MixedTokens(13);

void ExpectSameConfig(const ModelConfig& a, const ModelConfig& b) {
  testing::ExpectSameDimensions(b, a);
  EXPECT_EQ(a.context_length, b.context_length);
}

// Named after the file so that `ctest -R llama2c_reader` selects these tests.
class llama2c_reader : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::Stories260K();
    TOYLLM_REQUIRE_FILE(path_);
    legacy_ = testing::ReadFile(path_);
    ASSERT_FALSE(legacy_.empty()) << path_;
    dir_ = testing::TempDir();
  }

  // The copies of the model are a megabyte each: remove them.
  void TearDown() override { testing::RemoveTempDir(dir_); }

  // Writes `bytes` as `name` in the temp dir and loads it.
  absl::StatusOr<std::unique_ptr<ModelFile>> Load(const std::string& name,
                                                  const std::string& bytes) {
    return LoadModel(testing::WriteFile(dir_, name, bytes));
  }

  std::string path_;
  std::string legacy_;
  std::string dir_;
};

// ---------------------------------------------------------------------------------------
// Good files.

TEST_F(llama2c_reader, LoadsStories260K) {
  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path_);
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelConfig& c = (*model)->config;
  EXPECT_EQ((*model)->format, "llama2.c legacy (float32)");
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.hidden_dim, 172);
  EXPECT_EQ(c.n_layers, 5);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.head_dim, 8);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.context_length, 512);
  EXPECT_TRUE(c.tied_output);
  EXPECT_FLOAT_EQ(c.norm_eps, 1e-5f);
  EXPECT_FLOAT_EQ(c.rope_theta, 10000.0f);
  EXPECT_EQ(c.rope_layout, RopeLayout::kInterleaved);

  // The views point where the layout says: first array after the 28-byte header, the tied
  // output is the embedding itself, the final norm sits right before the RoPE tables.
  const ModelWeights& w = (*model)->weights;
  const LegacyLayout l = LayoutOf(legacy_);
  const uint8_t* base = (*model)->mappings.front()->data();
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(w.token_embedding.data), base + l.embedding.offset);
  EXPECT_EQ(w.output.data, w.token_embedding.data);
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(w.output_norm), base + l.final_norm.offset);
  ASSERT_EQ(w.layers.size(), 5u);
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(w.layers[4].w3.data),
            base + l.w3.offset + 4 * l.w3.bytes / 5);
  EXPECT_EQ(w.layers[2].wk.rows, 32);
  EXPECT_EQ(w.layers[2].wk.cols, 64);
  EXPECT_EQ(w.layers[2].w2.rows, 64);
  EXPECT_EQ(w.layers[2].w2.cols, 172);
}

TEST_F(llama2c_reader, UntiedLegacyClassifierGivesTheSameLogits) {
  absl::StatusOr<std::unique_ptr<ModelFile>> tied = LoadModel(path_);
  absl::StatusOr<std::unique_ptr<ModelFile>> untied = Load("untied.bin", UntiedLegacy(legacy_));
  ASSERT_TRUE(tied.ok()) << tied.status();
  ASSERT_TRUE(untied.ok()) << untied.status();
  EXPECT_FALSE((*untied)->config.tied_output);
  EXPECT_NE((*untied)->weights.output.data, (*untied)->weights.token_embedding.data);
  ExpectSameConfig((*tied)->config, (*untied)->config);
  const std::vector<float> expected = testing::AllLogits(**tied, kTokens);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(testing::AllLogits(**untied, kTokens), expected);
}

TEST_F(llama2c_reader, Version1ExportGivesTheSameLogits) {
  for (bool shared : {true, false}) {
    SCOPED_TRACE(shared ? "shared classifier" : "separate classifier");
    absl::StatusOr<std::unique_ptr<ModelFile>> legacy = LoadModel(path_);
    absl::StatusOr<std::unique_ptr<ModelFile>> v1 =
        Load("v1.bin", LegacyToVersion1(legacy_, shared));
    ASSERT_TRUE(legacy.ok()) << legacy.status();
    ASSERT_TRUE(v1.ok()) << v1.status();
    EXPECT_EQ((*v1)->format, "llama2.c version 1 (float32)");
    EXPECT_EQ((*v1)->config.tied_output, shared);
    ExpectSameConfig((*legacy)->config, (*v1)->config);
    // Same numbers in a different order: the logits must be bit-for-bit equal.
    const std::vector<float> expected = testing::AllLogits(**legacy, kTokens);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(testing::AllLogits(**v1, kTokens), expected);
  }
}

TEST_F(llama2c_reader, Version2Int8ExportIsDequantizedByGroup) {
  constexpr int kGroup = 32;
  absl::StatusOr<std::unique_ptr<ModelFile>> legacy = LoadModel(path_);
  absl::StatusOr<std::unique_ptr<ModelFile>> v2 = Load("v2.bin", LegacyToVersion2(legacy_, kGroup));
  ASSERT_TRUE(legacy.ok()) << legacy.status();
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ((*v2)->format, "llama2.c version 2 (int8, groups of 32)");
  ExpectSameConfig((*legacy)->config, (*v2)->config);
  // Each weight is within half a quantization step of the original: |w - q·s| <= s/2
  // with s = max|group| / 127, so never more than max|w| / 254 of its matrix.
  const Matrix& original = (*legacy)->weights.layers[2].w2;
  const Matrix& dequantized = (*v2)->weights.layers[2].w2;
  float worst = 0.0f, largest = 0.0f;
  for (int64_t i = 0; i < int64_t{original.rows} * original.cols; ++i) {
    worst = std::max(worst, std::fabs(original.floats()[i] - dequantized.floats()[i]));
    largest = std::max(largest, std::fabs(original.floats()[i]));
  }
  EXPECT_GT(worst, 0.0f) << "int8 cannot be exact";
  EXPECT_LE(worst, largest / 254.0f * 1.0001f);
  EXPECT_EQ((*v2)->weights.layers[0].attn_norm[5], (*legacy)->weights.layers[0].attn_norm[5]);
  // The logits stay close to float32's.
  const std::vector<float> expected = testing::AllLogits(**legacy, kTokens);
  const std::vector<float> actual = testing::AllLogits(**v2, kTokens);
  ASSERT_EQ(actual.size(), expected.size());
  EXPECT_LT(testing::MaxAbsDiff(actual, expected), 0.25f);
}

// ---------------------------------------------------------------------------------------
// Bad files. Each must fail with the file's path and these substrings in the message.

// Loads `bytes` written as `name` and expects the error.
#define EXPECT_LOAD_ERROR(name, bytes, ...)                          \
  do {                                                               \
    SCOPED_TRACE(name);                                              \
    const std::string file = testing::WriteFile(dir_, name, bytes);  \
    testing::ExpectError(LoadModel(file), file, {__VA_ARGS__});      \
  } while (0)

TEST_F(llama2c_reader, MissingEmptyOrNotAFile) {
  const std::string missing = dir_ + "/no_such_model.bin";
  absl::StatusOr<std::unique_ptr<ModelFile>> result = LoadModel(missing);
  testing::ExpectError(result, missing, {"cannot open", "No such file"});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);

  EXPECT_LOAD_ERROR("empty.bin", "", "empty");

  const std::string directory = dir_ + "/a_directory.bin";
  ASSERT_EQ(mkdir(directory.c_str(), 0755), 0);
  testing::ExpectError(LoadModel(directory), directory, {"not a regular file"});
}

TEST_F(llama2c_reader, WrongLength) {
  const std::string need = "need " + std::to_string(legacy_.size()) + " bytes";
  EXPECT_LOAD_ERROR("short_by_one.bin", legacy_.substr(0, legacy_.size() - 1), need,
                    "the file has " + std::to_string(legacy_.size() - 1), "truncated");
  EXPECT_LOAD_ERROR("header_only_part.bin", legacy_.substr(0, 27), "27 bytes",
                    "too short for a llama2.c header");
  EXPECT_LOAD_ERROR("one_int.bin", legacy_.substr(0, 4), "4 bytes is too short");
  // One byte too many is no truncation, but still not the file the header describes.
  const std::string file = testing::WriteFile(dir_, "one_extra_byte.bin", legacy_ + '\0');
  absl::StatusOr<std::unique_ptr<ModelFile>> result = LoadModel(file);
  testing::ExpectError(result, file, {need, "the file has " + std::to_string(legacy_.size() + 1)});
  EXPECT_EQ(result.status().message().find("truncated"), std::string::npos);
}

TEST_F(llama2c_reader, InconsistentHeads) {
  EXPECT_LOAD_ERROR("heads_7.bin", WithField(legacy_, kHeads, 7),
                    "n_heads = 7 does not divide dim = 64");
  EXPECT_LOAD_ERROR("kv_heads_3.bin", WithField(legacy_, kKvHeads, 3),
                    "n_kv_heads = 3 does not divide n_heads = 8");
  EXPECT_LOAD_ERROR("kv_heads_16.bin", WithField(legacy_, kKvHeads, 16),
                    "n_kv_heads = 16 does not divide n_heads = 8");
  // 64 / 32 = 2 would be fine, 64 / 64 = 1 is odd: RoPE needs pairs.
  EXPECT_LOAD_ERROR("head_dim_1.bin",
                    WithField(WithField(legacy_, kHeads, 64), kKvHeads, 64), "head_dim = 1");
}

TEST_F(llama2c_reader, ZeroOrNegativeSizes) {
  EXPECT_LOAD_ERROR("dim_0.bin", WithField(legacy_, kDim, 0), "dim = 0");
  EXPECT_LOAD_ERROR("dim_neg.bin", WithField(legacy_, kDim, -64), "dim = -64");
  EXPECT_LOAD_ERROR("hidden_0.bin", WithField(legacy_, kHidden, 0), "hidden_dim = 0");
  EXPECT_LOAD_ERROR("hidden_neg.bin", WithField(legacy_, kHidden, -172), "hidden_dim = -172");
  EXPECT_LOAD_ERROR("layers_0.bin", WithField(legacy_, kLayers, 0), "n_layers = 0");
  EXPECT_LOAD_ERROR("layers_neg.bin", WithField(legacy_, kLayers, -5), "n_layers = -5");
  EXPECT_LOAD_ERROR("heads_0.bin", WithField(legacy_, kHeads, 0), "n_heads = 0");
  EXPECT_LOAD_ERROR("heads_neg.bin", WithField(legacy_, kHeads, -8), "n_heads = -8");
  EXPECT_LOAD_ERROR("kv_heads_0.bin", WithField(legacy_, kKvHeads, 0), "n_kv_heads = 0");
  EXPECT_LOAD_ERROR("kv_heads_neg.bin", WithField(legacy_, kKvHeads, -4), "n_kv_heads = -4");
  EXPECT_LOAD_ERROR("vocab_0.bin", WithField(legacy_, kVocab, 0), "vocab_size = 0");
  EXPECT_LOAD_ERROR("seq_len_0.bin", WithField(legacy_, kSeqLen, 0), "context_length = 0");
  EXPECT_LOAD_ERROR("seq_len_neg.bin", WithField(legacy_, kSeqLen, -512), "context_length = -512");
}

TEST_F(llama2c_reader, AbsurdSizesFailWithoutAllocating) {
  const int64_t rss_before = testing::PeakRssKiB();
  EXPECT_LOAD_ERROR("vocab_2_30.bin", WithField(legacy_, kVocab, 1 << 30),
                    "vocab_size = 1073741824 is outside");
  EXPECT_LOAD_ERROR("layers_2_30.bin", WithField(legacy_, kLayers, 1 << 30),
                    "n_layers = 1073741824 is outside");
  EXPECT_LOAD_ERROR("seq_len_max.bin", WithField(legacy_, kSeqLen, INT32_MAX),
                    "context_length = 2147483647 is outside");
  EXPECT_LOAD_ERROR("dim_max.bin", WithField(legacy_, kDim, INT32_MAX), "dim = 2147483647");
  // -INT32_MIN does not exist; the message must still show what the file holds.
  EXPECT_LOAD_ERROR("vocab_min.bin", WithField(legacy_, kVocab, INT32_MIN),
                    "vocab_size = -2147483648 is outside");
  // Within every limit, yet far more than the file holds: caught by the size check, whose
  // arithmetic must not overflow (about 2^48 bytes here).
  std::string huge = WithField(legacy_, kDim, 1 << 16);
  huge = WithField(huge, kHidden, 1 << 18);
  huge = WithField(huge, kLayers, 1024);
  huge = WithField(huge, kVocab, 1 << 22);
  huge = WithField(huge, kSeqLen, 1 << 22);
  EXPECT_LOAD_ERROR("huge_but_valid.bin", huge, "the header's dimensions need", "truncated");
  EXPECT_LOAD_ERROR("vocab_4m.bin", WithField(legacy_, kVocab, 1 << 22), "truncated");
  // Garbage throughout: every field 0xffffffff (-1).
  EXPECT_LOAD_ERROR("all_ones.bin", std::string(4096, '\xff'), "bad header");
  EXPECT_LT(testing::PeakRssKiB() - rss_before, 64 * 1024) << "KiB of peak memory for bad headers";
}

TEST_F(llama2c_reader, BadVersion1Files) {
  const std::string v1 = LegacyToVersion1(legacy_, true);
  std::string version3 = v1;
  PutInt(version3, kV1VersionOffset, 3);
  const std::string file = testing::WriteFile(dir_, "version3.bin", version3);
  absl::StatusOr<std::unique_ptr<ModelFile>> result = LoadModel(file);
  testing::ExpectError(result, file, {"version 3", "not supported"});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnimplemented);

  EXPECT_LOAD_ERROR("v1_short_by_one.bin", v1.substr(0, v1.size() - 1), "truncated");
  EXPECT_LOAD_ERROR("v1_header_cut.bin", v1.substr(0, 100), "100 bytes", "too short");
  EXPECT_LOAD_ERROR("v1_magic_only.bin", v1.substr(0, 4), "too short");
  // A separate classifier announced but absent.
  std::string unshared = v1;
  unshared[kV1SharedFlagOffset] = 0;
  EXPECT_LOAD_ERROR("v1_missing_classifier.bin", unshared, "truncated");
  const std::string v2 = LegacyToVersion2(legacy_, 32);
  EXPECT_LOAD_ERROR("v2_short_by_one.bin", v2.substr(0, v2.size() - 1), "truncated");
  std::string bad_group = v2;
  const int32_t group = 24;  // does not divide dim 64
  std::memcpy(&bad_group[kV1SharedFlagOffset + 1], &group, sizeof(group));
  EXPECT_LOAD_ERROR("v2_bad_group.bin", bad_group, "group size 24 does not divide dim 64");
  std::string negative_vocab = v1;
  PutInt(negative_vocab, kV1ParamsOffset + 4 * kVocab, -512);
  EXPECT_LOAD_ERROR("v1_negative_vocab.bin", negative_vocab, "vocab_size = -512");
  std::string bad_heads = v1;
  PutInt(bad_heads, kV1ParamsOffset + 4 * kKvHeads, 3);
  EXPECT_LOAD_ERROR("v1_kv_heads_3.bin", bad_heads, "n_kv_heads = 3 does not divide");
}

}  // namespace
}  // namespace toyllm
