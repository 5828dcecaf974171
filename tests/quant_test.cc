// ggml's block types against an independent decoder (tests/gguf_dequantize.py, numpy from
// the block layouts): on llama.cpp's own zoo files (Q8_0, Q4_K, Q6_K as llama-quantize
// wrote them) and on files of every type toyllm's quantizer writes; the quantizer's error;
// and the preset rules, on llama-quantize's choices for the zoo models.
#include <cmath>
#include <cstring>
#include <iostream>
#include <iterator>
#include <cstdio>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/gguf_file.h"
#include "models/gguf_writer.h"
#include "models/mapped_file.h"
#include "models/model_file.h"
#include "models/random_llama.h"
#include "models/quant_preset.h"
#include "runtime/quant_blocks.h"
#include "runtime/weight_convert.h"
#include "test_env.h"
#include "test_util.h"

namespace toyllm {
namespace {

constexpr GgmlType kBlockTypes[] = {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0,
                                    GgmlType::kQ5_1, GgmlType::kQ8_0, GgmlType::kQ2_K,
                                    GgmlType::kQ3_K, GgmlType::kQ4_K, GgmlType::kQ5_K,
                                    GgmlType::kQ6_K, GgmlType::kIQ4_NL};

// Runs one of the test scripts beside this file with Debian's python3 (numpy); its stdout.
std::string RunScript(const std::string& script, const std::vector<std::string>& args) {
  std::string command = "/usr/bin/python3 " + std::string(TOYLLM_SOURCE_DIR) + "/tests/" + script;
  for (const std::string& a : args) command += " '" + a + "'";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  size_t n;
  while (pipe != nullptr && (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  EXPECT_EQ(pipe != nullptr ? pclose(pipe) : -1, 0) << command;
  return out;
}

// Runs the numpy decoder on `path`: tensor index -> its dequantised weights.
std::map<size_t, std::vector<float>> DecodeWithNumpy(const std::string& path, const std::string& dir) {
  const std::string listing = RunScript("gguf_dequantize.py", {path, dir});
  std::map<size_t, std::vector<float>> decoded;
  std::istringstream lines(listing);
  size_t index;
  std::string name;
  int type;
  int64_t elements;
  while (lines >> index >> name >> type >> elements) {
    const std::string file = dir + "/" + std::to_string(index) + ".f32";
    const std::string bytes = testing::ReadFile(file);
    std::remove(file.c_str());
    std::vector<float>& v = decoded[index];
    v.resize(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), v.size() * 4);
    EXPECT_EQ(static_cast<int64_t>(v.size()), elements) << name;
  }
  return decoded;
}

// Every quantized tensor of the file: toyllm's ToFloat32 equals numpy's decoding, up to the
// last bits of the float arithmetic (the scale products may round differently, e.g. fused).
// Returns the number of tensors compared per type name.
std::map<std::string, int> ExpectSameDequantisation(const std::string& path, const std::string& dir) {
  std::map<std::string, int> compared;
  absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return compared;
  absl::StatusOr<GgufFile> gguf = GgufFile::Parse(**file);
  EXPECT_TRUE(gguf.ok()) << gguf.status();
  if (!gguf.ok()) return compared;
  const std::map<size_t, std::vector<float>> numpy = DecodeWithNumpy(path, dir);
  for (size_t i = 0; i < gguf->tensors().size(); ++i) {
    const GgufTensor& t = gguf->tensors()[i];
    if (!IsBlockQuantized(t.type)) continue;
    SCOPED_TRACE(t.name);
    const auto it = numpy.find(i);
    if (it == numpy.end()) {
      ADD_FAILURE() << "numpy did not decode it";
      continue;
    }
    std::vector<float> ours(it->second.size());
    ToFloat32(t.type, t.data, static_cast<int64_t>(ours.size()), ours.data());
    int64_t worst = -1;
    double worst_diff = 0;
    for (size_t j = 0; j < ours.size(); ++j) {
      const double diff = std::fabs(double{ours[j]} - it->second[j]);
      const double allowed = 1e-7 + 1e-6 * std::fabs(it->second[j]);
      if (diff > allowed && diff > worst_diff) {
        worst = static_cast<int64_t>(j);
        worst_diff = diff;
      }
    }
    EXPECT_EQ(worst, -1) << "weight " << worst << " (block " << worst / BlockShapeOf(t.type).elements
                         << "): toyllm " << ours[worst < 0 ? 0 : worst] << ", numpy "
                         << it->second[worst < 0 ? 0 : worst];
    ++compared[GgmlTypeName(t.type)];
  }
  return compared;
}

std::map<std::string, int> TypeCounts(const std::string& path) {
  std::map<std::string, int> counts;
  absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return counts;
  absl::StatusOr<GgufFile> gguf = GgufFile::Parse(**file);
  if (!gguf.ok()) return counts;
  for (const GgufTensor& t : gguf->tensors()) ++counts[GgmlTypeName(t.type)];
  return counts;
}

class quant : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::TempDir(); }
  void TearDown() override { testing::RemoveTempDir(dir_); }
  std::string dir_;
};

TEST_F(quant, LlamaCppsZooFilesDequantiseAsTheIndependentDecoderDoes) {
  struct Zoo {
    const char* file;
    std::map<std::string, int> types;  // from the zoo README
  };
  for (const Zoo& zoo : {Zoo{"models/qwen2-Q8_0.gguf", {{"f32", 11}, {"q8_0", 15}}},
                         Zoo{"models/qwen2-Q4_K_M.gguf", {{"f32", 11}, {"q4_k", 12}, {"q6_k", 3}}},
                         Zoo{"models/llama31-Q4_K_M.gguf", {{"f32", 6}, {"q4_k", 13}, {"q6_k", 3}}}}) {
    const std::string path = testing::SharedPath("zoo", zoo.file);
    TOYLLM_REQUIRE_FILE(path);
    SCOPED_TRACE(zoo.file);
    EXPECT_EQ(TypeCounts(path), zoo.types);
    std::map<std::string, int> quantized = zoo.types;
    quantized.erase("f32");
    EXPECT_EQ(ExpectSameDequantisation(path, dir_), quantized);
  }
}

// Weights ~ N(0, 1) with an outlier per 100, as trained matrices have them.
std::vector<float> Weights(std::mt19937& gen, size_t n) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = normal(gen) * (i % 100 == 37 ? 8.0f : 1.0f);
  return v;
}

TEST_F(quant, EveryTypeToyllmWritesDequantisesAsTheIndependentDecoderDoes) {
  std::mt19937 gen(3);
  GgufWriter w;
  w.AddString("general.architecture", "none");
  std::vector<std::vector<float>> values;
  values.reserve(std::size(kBlockTypes) + 1);  // the encoders keep pointers to them
  for (GgmlType type : kBlockTypes) {
    values.push_back(Weights(gen, 8 * 512));
    const std::vector<float>* v = &values.back();
    w.AddTensor(GgmlTypeName(type), {512, 8}, type, [type, v](std::string* out) {
      FromFloat32(type, v->data(), static_cast<int64_t>(v->size()), out);
    });
  }
  // A zero block and a constant one: the searches' degenerate cases.
  values.push_back(std::vector<float>(512, 0.0f));
  values.back().resize(1024, 0.5f);
  for (GgmlType type : kBlockTypes) {
    const std::vector<float>* v = &values.back();
    w.AddTensor(GgmlTypeName(type) + ".flat", {512, 2}, type, [type, v](std::string* out) {
      FromFloat32(type, v->data(), static_cast<int64_t>(v->size()), out);
    });
  }
  const std::string path = dir_ + "/types.gguf";
  ASSERT_TRUE(w.Write(path).ok());
  const std::map<std::string, int> compared = ExpectSameDequantisation(path, dir_);
  for (GgmlType type : kBlockTypes) EXPECT_EQ(compared.at(GgmlTypeName(type)), 2) << GgmlTypeName(type);
}

// The quantizer's error, relative to the weights' RMS, on N(0, 1) weights with outliers:
// measured (llama.cpp's reference searches) q4_0 0.1377, q4_1 0.0958, q5_0 0.0691,
// q5_1 0.0463, q8_0 0.00866, q2_k 0.3356, q3_k 0.1946, q4_k 0.0893, q5_k 0.0449, q6_k 0.0257,
// iq4_nl 0.1065 (llama.cpp's own search 0.1065 too; toyllm's searches its own way).
// Bounds about 5 % above: a search that went astray or a misplaced bit fails them.
TEST_F(quant, RoundTripErrorIsWhatTheFormatAllows) {
  const std::map<GgmlType, double> bound = {
      {GgmlType::kQ4_0, 0.145}, {GgmlType::kQ4_1, 0.101}, {GgmlType::kQ5_0, 0.0726},
      {GgmlType::kQ5_1, 0.0487}, {GgmlType::kQ8_0, 0.0091}, {GgmlType::kQ2_K, 0.353},
      {GgmlType::kQ3_K, 0.205}, {GgmlType::kQ4_K, 0.0938}, {GgmlType::kQ5_K, 0.0472},
      {GgmlType::kQ6_K, 0.0270}, {GgmlType::kIQ4_NL, 0.112}};
  std::mt19937 gen(4);
  const std::vector<float> x = Weights(gen, 64 * 1024);
  double sum_x2 = 0;
  for (float v : x) sum_x2 += double{v} * v;
  for (GgmlType type : kBlockTypes) {
    std::string bytes;
    FromFloat32(type, x.data(), static_cast<int64_t>(x.size()), &bytes);
    ASSERT_EQ(static_cast<int64_t>(bytes.size()), WeightBytes(type, static_cast<int64_t>(x.size())));
    std::vector<float> y(x.size());
    ToFloat32(type, bytes.data(), static_cast<int64_t>(y.size()), y.data());
    double sum_e2 = 0;
    for (size_t i = 0; i < x.size(); ++i) sum_e2 += (double{x[i]} - y[i]) * (double{x[i]} - y[i]);
    const double relative = std::sqrt(sum_e2 / sum_x2);
    std::cerr << GgmlTypeName(type) << ": relative RMS error " << relative << "\n";
    EXPECT_LT(relative, bound.at(type)) << GgmlTypeName(type);
    EXPECT_GT(relative, bound.at(type) * 0.7) << GgmlTypeName(type) << ": better than its format allows?";
  }
}

// Blocks made by hand, with values computed from ggml's formulas by hand.
TEST_F(quant, HandBuiltLegacyBlocksDecodeToKnownValues) {
  // Q4_0: d = 0.5, byte j = j | (15 - j) << 4: weights (j - 8)/2 and (7 - j)/2.
  BlockQ4_0 q4;
  q4.d = 0x3800;
  for (int j = 0; j < 16; ++j) q4.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  float y[32];
  ToFloat32(GgmlType::kQ4_0, &q4, 32, y);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j - 8) * 0.5f);
    EXPECT_EQ(y[j + 16], (7 - j) * 0.5f);
  }
  // Q5_1: d = 2, m = -1, the fifth bit set on odd weights: d·q + m.
  BlockQ5_1 q5;
  q5.d = 0x4000;
  q5.m = 0xbc00;
  const uint32_t odd = 0xAAAAAAAA;
  std::memcpy(q5.qh, &odd, 4);
  for (int j = 0; j < 16; ++j) q5.qs[j] = static_cast<uint8_t>(j | (j << 4));
  ToFloat32(GgmlType::kQ5_1, &q5, 32, y);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], 2.0f * ((i % 16) + (i % 2 ? 16 : 0)) - 1.0f) << i;
  // Q2_K: d = 1, dmin = 0.5, group g's scale g % 16 and min 1; every 2-bit value 3.
  BlockQ2_K q2;
  q2.d = 0x3c00;
  q2.dmin = 0x3800;
  for (int g = 0; g < 16; ++g) q2.scales[g] = static_cast<uint8_t>(g | (1 << 4));
  std::memset(q2.qs, 0xFF, sizeof(q2.qs));
  float k[256];
  ToFloat32(GgmlType::kQ2_K, &q2, 256, k);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(k[i], 3.0f * (i / 16) - 0.5f) << i;
}

// llama-quantize's choices for the zoo's two-layer models, as their files record them.
TEST_F(quant, PresetsChooseLlamaQuantizesTypes) {
  const QuantPreset q4_k_m = *ParseQuantPreset("q4_k_m");
  for (const char* zoo : {"models/qwen2-Q4_K_M.gguf", "models/llama31-Q4_K_M.gguf"}) {
    const std::string path = testing::SharedPath("zoo", zoo);
    TOYLLM_REQUIRE_FILE(path);
    absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
    ASSERT_TRUE(file.ok());
    absl::StatusOr<GgufFile> gguf = GgufFile::Parse(**file);
    ASSERT_TRUE(gguf.ok());
    const bool tied = gguf->FindTensor("output.weight") == nullptr;
    const int n_gqa = tied ? 2 : 4;
    for (const GgufTensor& t : gguf->tensors()) {
      if (t.dims.size() != 2) continue;
      const int layer = t.name.rfind("blk.", 0) == 0 ? t.name[4] - '0' : -1;
      const bool is_output = t.name == "output.weight" || (tied && t.name == "token_embd.weight");
      EXPECT_EQ(GgmlTypeName(PresetTensorType(q4_k_m, {t.name, static_cast<int>(t.dims[0]), layer, 2, n_gqa, is_output})),
                GgmlTypeName(t.type))
          << zoo << " " << t.name;
    }
    EXPECT_EQ(*gguf->GetInt("general.file_type"), FileType(q4_k_m));
  }
  // Rows that are not whole 256-blocks (Qwen2.5-0.5B's 896): llama-quantize's fallbacks.
  const auto type = [](const char* preset, const char* name, int cols, int layer, bool output = false) {
    return GgmlTypeName(PresetTensorType(*ParseQuantPreset(preset), {name, cols, layer, 24, 7, output}));
  };
  EXPECT_EQ(type("q4_k_m", "blk.5.attn_q.weight", 896, 5), "q5_0");
  EXPECT_EQ(type("q4_k_m", "blk.0.attn_v.weight", 896, 0), "q8_0");  // Q6_K's fallback
  EXPECT_EQ(type("q5_k_m", "blk.5.attn_q.weight", 896, 5), "q5_1");
  EXPECT_EQ(type("q4_k_m", "token_embd.weight", 896, -1, true), "q8_0");
  // ffn_down's rows of 4864 = 19 · 256 fit K-quants: Q6_K in the layers use_more_bits picks.
  EXPECT_EQ(type("q4_k_m", "blk.0.ffn_down.weight", 4864, 0), "q6_k");
  EXPECT_EQ(type("q4_k_m", "blk.4.ffn_down.weight", 4864, 4), "q4_k");
  EXPECT_EQ(type("q4_k_m", "blk.5.ffn_down.weight", 4864, 5), "q6_k");
  EXPECT_EQ(type("q4_0", "output.weight", 4096, -1, true), "q6_k");
  EXPECT_EQ(type("q8_0", "output.weight", 4096, -1, true), "q8_0");
  EXPECT_EQ(type("q2_k", "blk.3.attn_v.weight", 4096, 3), "q4_k");  // 7 query heads per KV head
  EXPECT_EQ(type("q3_k_m", "blk.1.attn_v.weight", 4096, 1), "q5_k");
  EXPECT_EQ(type("q3_k_m", "blk.3.attn_output.weight", 4096, 3), "q4_k");
  EXPECT_EQ(type("f16", "blk.3.attn_output.weight", 4096, 3), "f16");
  EXPECT_EQ(FileType(*ParseQuantPreset("q5_k_m")), 17u);
  EXPECT_EQ(FileType(*ParseQuantPreset("q4_0")), 2u);
  EXPECT_EQ(FileType(*ParseQuantPreset("q6_k")), 18u);
  EXPECT_EQ(QuantPresetName(*ParseQuantPreset("q4_k")), "q4_k_m");
  EXPECT_EQ(type("q3_k_m", "blk.5.attn_q.weight", 896, 5), "iq4_nl");
  EXPECT_EQ(type("q2_k", "blk.5.ffn_up.weight", 896, 5), "iq4_nl");
  EXPECT_FALSE(ParseQuantPreset("iq4_nl").ok());
}

// Requantizes every matrix of a GGUF file with `preset`'s per-tensor types, as llama-quantize
// does (norms and biases stay f32), a row at a time; from `source`'s float32 values where it
// has the matrix, else from the file's. For the tied qwen2 model: the token embedding is the
// output.
using Matrices = std::map<std::string, std::vector<float>>;
void Requantize(const GgufFile& in, const QuantPreset& preset, int n_layers, int n_gqa, const std::string& path,
                const Matrices& source = {}) {
  GgufWriter w;
  w.AddString("general.architecture", "qwen2");
  for (const GgufTensor& t : in.tensors()) {
    std::vector<int64_t> dims(t.dims.begin(), t.dims.end());
    if (dims.size() == 1) {
      w.AddTensor(t.name, dims, t.type, [&t](std::string* out) { out->append(reinterpret_cast<const char*>(t.data), t.bytes); });
      continue;
    }
    const int cols = static_cast<int>(dims[0]);
    const int layer = t.name.rfind("blk.", 0) == 0 ? std::stoi(t.name.substr(4)) : -1;
    const GgmlType type = PresetTensorType(preset, {t.name, cols, layer, n_layers, n_gqa, t.name == "token_embd.weight"});
    const auto given = source.find(t.name);
    const float* values = given != source.end() ? given->second.data() : nullptr;
    w.AddTensor(t.name, dims, type, [&t, cols, type, values](std::string* out) {
      std::vector<float> row(cols);
      const int64_t row_bytes = WeightBytes(t.type, cols);
      for (int64_t r = 0; r < t.dims[1]; ++r) {
        if (values != nullptr) {
          std::copy(values + r * cols, values + (r + 1) * cols, row.begin());
        } else {
          ToFloat32(t.type, t.data + r * row_bytes, cols, row.data());
        }
        FromFloat32(type, row.data(), cols, out);
      }
    });
  }
  ASSERT_TRUE(w.Write(path).ok());
}

// Mean KL divergence of next-token distributions from the reference's (tests/zoo_kl.py:
// float64, weights only, no activation rounding), per candidate: over the zoo prompts and
// over those and 8 random token sequences (555 positions).
struct Kl {
  double zoo_prompts, all;
};
std::vector<Kl> ZooKl(const std::string& reference, const std::vector<std::string>& candidates) {
  std::vector<std::string> args = {testing::SharedPath("zoo", ""), reference};
  args.insert(args.end(), candidates.begin(), candidates.end());
  const std::string out = RunScript("zoo_kl.py", args);
  std::vector<Kl> kl;
  std::istringstream lines(out);
  std::string path;
  double zoo, all, same;
  while (lines >> path >> zoo >> all >> same) {
    std::cerr << path << ": mean KL " << zoo << " (zoo prompts), " << all << " (all), same argmax " << same << "\n";
    kl.push_back({zoo, all});
  }
  return kl;
}

// The zoo qwen2 model's float32 matrices, regenerated by tests/zoo_weights.py from the zoo
// README's recipe, checked against the zoo's Q8_0 file: quantized to Q8_0 they must give
// its bytes (all but 162 of 1.23 million blocks do; random weights would match none).
Matrices RegeneratedZooMatrices(const GgufFile& q8_0, const std::string& dir) {
  std::vector<std::string> names;
  for (const GgufTensor& t : q8_0.tensors()) {
    if (t.dims.size() == 2) names.push_back(t.name);
  }
  std::istringstream lines(RunScript("zoo_weights.py", [&] {
    std::vector<std::string> args = {dir};
    args.insert(args.end(), names.begin(), names.end());
    return args;
  }()));
  Matrices matrices;
  std::string name;
  int64_t elements;
  while (lines >> name >> elements) {
    const std::string file = dir + "/" + name + ".f32";
    const std::string bytes = testing::ReadFile(file);
    std::remove(file.c_str());
    std::vector<float>& v = matrices[name];
    v.resize(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), v.size() * 4);
    const GgufTensor* t = q8_0.FindTensor(name);
    EXPECT_EQ(static_cast<int64_t>(v.size()), t->dims[0] * t->dims[1]) << name;
    std::string requantized;
    FromFloat32(GgmlType::kQ8_0, v.data(), static_cast<int64_t>(v.size()), &requantized);
    if (requantized.size() != t->bytes) {
      ADD_FAILURE() << name << ": " << requantized.size() << " bytes of Q8_0, the file has " << t->bytes;
      continue;
    }
    int64_t differ = 0;
    const int64_t blocks = static_cast<int64_t>(t->bytes / sizeof(BlockQ8_0));
    for (int64_t b = 0; b < blocks; ++b) {
      differ += std::memcmp(requantized.data() + b * sizeof(BlockQ8_0), t->data + b * sizeof(BlockQ8_0), sizeof(BlockQ8_0)) != 0;
    }
    if (differ > 0) std::cerr << name << ": " << differ << " of " << blocks << " Q8_0 blocks differ\n";
    EXPECT_LE(differ, blocks / 1000) << name << ": not the weights the zoo's Q8_0 was made from";
  }
  EXPECT_EQ(matrices.size(), names.size());
  return matrices;
}

// toyllm's quantizer against llama-quantize's, on the same model, as the issue asks: both
// quantize the zoo qwen2's float32 weights (regenerated above; llama.cpp started from them)
// with the Q4_K_M preset, and each file's mean KL divergence of next-token distributions
// from the float32 model's is measured. Measured, zoo prompts (43 positions) / all 555:
//   llama.cpp Q4_K_M 0.5371 / 0.4749, toyllm Q4_K_M 0.5375 / 0.4757, toyllm Q6_K 0.0473 / 0.0587.
// (With the Q8_0 file as the reference and toyllm quantizing from it, as before the recipe
// was used, the zoo prompts gave 0.5430 for llama.cpp's and 0.6498 for toyllm's.)
TEST_F(quant, ToyllmsQ4_K_MIsAsCloseToTheFloat32ModelAsLlamaCpps) {
  const std::string q8_0 = testing::SharedPath("zoo", "models/qwen2-Q8_0.gguf");
  const std::string llama = testing::SharedPath("zoo", "models/qwen2-Q4_K_M.gguf");
  TOYLLM_REQUIRE_FILE(q8_0);
  TOYLLM_REQUIRE_FILE(llama);
  absl::StatusOr<std::unique_ptr<MappedFile>> file = MappedFile::Open(q8_0);
  ASSERT_TRUE(file.ok());
  absl::StatusOr<GgufFile> gguf = GgufFile::Parse(**file);
  ASSERT_TRUE(gguf.ok());
  const Matrices f32 = RegeneratedZooMatrices(*gguf, dir_);
  ASSERT_FALSE(HasFailure());
  const std::string reference = dir_ + "/f32.gguf";
  Requantize(*gguf, *ParseQuantPreset("f32"), 2, 2, reference, f32);
  std::vector<std::string> ours;
  for (const char* preset : {"q4_k_m", "q6_k"}) {
    ours.push_back(dir_ + "/" + preset + ".gguf");
    Requantize(*gguf, *ParseQuantPreset(preset), 2, 2, ours.back(), f32);
  }
  EXPECT_EQ(TypeCounts(ours[0]), TypeCounts(llama)) << "the same per-tensor types as llama-quantize";
  const std::vector<Kl> kl = ZooKl(reference, {llama, ours[0], ours[1]});
  ASSERT_EQ(kl.size(), 3u);
  EXPECT_LE(kl[1].zoo_prompts, 1.10 * kl[0].zoo_prompts) << "the issue's bound: no worse than llama.cpp's by more than 10 %";
  EXPECT_LE(kl[1].all, 1.10 * kl[0].all) << "and over the random sequences too";
  EXPECT_GT(kl[1].all, 0.3) << "a 4-bit model cannot be that close";
  EXPECT_LT(kl[2].all, kl[1].all / 5) << "6 bits are far closer than 4";
}

// Through the whole forward pass, on a 256-wide random model of each preset (the K-quant
// presets mix in q3_k, q4_k, q6_k): decode (GEMV on quantized activations, token by token)
// and prefill (dequantised tiles into sgemm, one batch) give the same logits within the
// activation rounding. Measured max |difference| / logit RMS over the 10 × 512 logits:
// q8_0 0.035 (the 32-block rounding alone), q4_0 0.058, q2_k 0.059, q4_k_m 0.065,
// q6_k 0.054 (256-blocks round coarser); a wrong decode kernel is off by the logits' size.
TEST_F(quant, DecodeAndPrefillAgreeOnEveryPreset) {
  ModelConfig c;
  c.dim = 256;
  c.hidden_dim = 512;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = 64;
  c.vocab_size = 512;
  c.context_length = 32;
  const std::vector<int> tokens = {1, 17, 300, 42, 42, 7, 511, 0, 99, 250};
  for (const char* name : {"q8_0", "q4_0", "q2_k", "q4_k_m", "q6_k"}) {
    SCOPED_TRACE(name);
    const QuantPreset preset = *ParseQuantPreset(name);
    ExportOptions options;
    options.type = preset.base;
    options.mix = preset.mix;
    const std::string path = dir_ + "/" + name + ".gguf";
    ASSERT_TRUE(WriteRandomLlamaGguf(path, c, 1, options).ok());
    absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_TRUE(IsBlockQuantized((*model)->weights.layers[1].w2.type));
    const std::vector<float> batch = testing::AllLogits((*model)->config, (*model)->weights, tokens, 32);
    const std::vector<float> decode = testing::AllLogits((*model)->config, (*model)->weights, tokens, 32, 1);
    double sum2 = 0;
    for (float v : batch) sum2 += double{v} * v;
    const double rms = std::sqrt(sum2 / batch.size());
    const double relative = testing::MaxAbsDiff(batch, decode) / rms;
    std::cerr << name << ": decode vs prefill max |diff| / rms " << relative << "\n";
    EXPECT_GT(relative, 0.0) << "decode rounds its activations";
    EXPECT_LT(relative, 0.1);
  }
}

}  // namespace
}  // namespace toyllm
