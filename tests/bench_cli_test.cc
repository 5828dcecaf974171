// `toyllm bench` and `toyllm convert --random`, run as a user runs them. Speeds are only
// checked for sanity (positive, ordered), never against a time: the machine is shared.
// What the bound divides by, the weight bytes a token reads, is checked against sums
// written out from the shapes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gtest/gtest.h"
#include "models/benchmark_shapes.h"
#include "models/random_llama.h"
#include "models/model_file.h"
#include "tests/test_env.h"
#include "runtime/weight_convert.h"
#include "tests/test_util.h"
#include "tools/cli/bandwidth.h"
#include "tools/cli/weight_traffic.h"

namespace toyllm {
namespace {

using ::toyllm::testing::ReadFile;
using ::toyllm::testing::RunResult;
using ::toyllm::testing::RunToyllm;

constexpr std::chrono::seconds kTimeout(120);

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Checks one JSON line of bench against the format; returns the parsed object.
nlohmann::ordered_json CheckJsonLine(const std::string& line, const std::string& model,
                                     const std::string& type) {
  SCOPED_TRACE(line);
  const nlohmann::ordered_json m = nlohmann::ordered_json::parse(line, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(m.is_object());
  if (!m.is_object()) return m;
  const bool decode = m.value("test", "").rfind("tg", 0) == 0;
  std::vector<std::string> keys;
  for (const auto& [key, value] : m.items()) keys.push_back(key);
  std::vector<std::string> expected = {"model", "type", "threads", "test", "tok_s_median", "tok_s_min",
                                       "tok_s_max", "peak_rss_mib", "bandwidth_gbs", "dram_gbs"};
  // Only a pure decode test has a bound; "pp8+tg4" starts with "pp".
  if (decode) expected.push_back("bound_pct");
  EXPECT_EQ(keys, expected);
  EXPECT_EQ(m.value("model", ""), model);
  EXPECT_EQ(m.value("type", ""), type);
  EXPECT_TRUE(m["threads"].is_number_integer());
  EXPECT_TRUE(m["test"].is_string());
  for (const char* key : {"tok_s_median", "tok_s_min", "tok_s_max", "peak_rss_mib", "bandwidth_gbs", "dram_gbs"}) {
    EXPECT_TRUE(m[key].is_number()) << key;
    EXPECT_GT(m.value(key, 0.0), 0.0) << key;
  }
  EXPECT_LE(m.value("tok_s_min", 0.0), m.value("tok_s_median", 0.0));
  EXPECT_LE(m.value("tok_s_median", 0.0), m.value("tok_s_max", 0.0));
  if (decode) {
    EXPECT_GT(m.value("bound_pct", 0.0), 0.0);
  }
  return m;
}

TEST(bench, JsonLinesOnStories260K) {
  const std::string model = testing::Stories260K();
  TOYLLM_REQUIRE_FILE(model);
  const RunResult r = RunToyllm(
      {"bench", "-m", model, "-p", "8,16", "-n", "4", "-t", "1,2", "-r", "2", "--json", "--capture"}, kTimeout);
  ASSERT_TRUE(testing::Succeeds(r));
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 8u) << r.out;
  const std::vector<std::pair<int, std::string>> expected = {
      {1, "pp8"}, {1, "pp16"}, {1, "tg4"}, {1, "tg4+attn"},
      {2, "pp8"}, {2, "pp16"}, {2, "tg4"}, {2, "tg4+attn"}};
  for (size_t i = 0; i < lines.size(); ++i) {
    const nlohmann::ordered_json m = CheckJsonLine(lines[i], model, "f32");
    EXPECT_EQ(m.value("threads", 0), expected[i].first) << lines[i];
    EXPECT_EQ(m.value("test", ""), expected[i].second) << lines[i];
  }
}

TEST(bench, MarkdownTable) {
  const std::string model = testing::Stories260K();
  TOYLLM_REQUIRE_FILE(model);
  const RunResult r = RunToyllm({"bench", "-m", model, "-p", "8", "-n", "4", "-t", "1", "-r", "1"}, kTimeout);
  ASSERT_TRUE(testing::Succeeds(r));
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0].rfind("| model | type | threads | test | tok/s median |", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("| --- |", 0), 0u) << lines[1];
  for (const std::string& line : lines) {
    EXPECT_EQ(std::count(line.begin(), line.end(), '|'), 12) << line;
  }
  EXPECT_EQ(lines[2].rfind("| " + model + " | f32 | 1 | pp8 | ", 0), 0u) << lines[2];
  EXPECT_EQ(lines[3].rfind("| " + model + " | f32 | 1 | tg4 | ", 0), 0u) << lines[3];
  EXPECT_NE(lines[3].substr(lines[3].size() - 4), "|  |") << "decode rows show their bound";
}

// The tests' names, in order, of a JSON run.
std::vector<std::string> TestNames(const std::string& out) {
  std::vector<std::string> names;
  for (const std::string& line : Lines(out)) {
    names.push_back(nlohmann::json::parse(line, nullptr, false).value("test", "?"));
  }
  return names;
}

TEST(bench, LlamaBenchTestSelection) {
  const std::string model = testing::Stories260K();
  TOYLLM_REQUIRE_FILE(model);
  const std::vector<std::string> common = {"bench", "-m", model, "-t", "1", "-r", "1", "-o", "json"};
  const auto run = [&](const std::vector<std::string>& flags) {
    std::vector<std::string> args = common;
    args.insert(args.end(), flags.begin(), flags.end());
    const RunResult r = RunToyllm(args, kTimeout);
    EXPECT_TRUE(testing::Succeeds(r)) << testing::QuotedArgs(flags);
    for (const std::string& line : Lines(r.out)) CheckJsonLine(line, model, "f32");
    return TestNames(r.out);
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(run({"-p", "0", "-n", "4"}), Names({"tg4"}));
  EXPECT_EQ(run({"-p", "8", "-n", "0"}), Names({"pp8"}));
  EXPECT_EQ(run({"-p", "0", "-n", "0", "-pg", "8,4"}), Names({"pp8+tg4"}));
  EXPECT_EQ(run({"-p", "8", "-n", "4", "-pg", "8,4"}), Names({"pp8", "tg4", "pp8+tg4"}));
  EXPECT_EQ(run({"-p", "8", "-n", "4", "-d", "0,16"}),
            Names({"pp8", "tg4", "pp8 @ d16", "tg4 @ d16"}));
  EXPECT_EQ(run({"-p", "0", "-n", "4", "-o", "jsonl"}), Names({"tg4"})) << "llama-bench's name for an object per line";
}

TEST(bench, CsvHasAHeaderAndARowPerTest) {
  const std::string model = testing::Stories260K();
  TOYLLM_REQUIRE_FILE(model);
  const RunResult r = RunToyllm({"bench", "-m", model, "-p", "8", "-n", "4", "-t", "1", "-r", "1", "-o", "csv"},
                                kTimeout);
  ASSERT_TRUE(testing::Succeeds(r));
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0],
            "model,type,threads,test,tok_s_median,tok_s_min,tok_s_max,peak_rss_mib,bandwidth_gbs,dram_gbs,bound_pct");
  for (const std::string& line : lines) EXPECT_EQ(std::count(line.begin(), line.end(), ','), 10) << line;
  EXPECT_EQ(lines[1].rfind("\"" + model + "\",\"f32\",1,\"pp8\",", 0), 0u) << lines[1];
  EXPECT_EQ(lines[1].back(), ',') << "prefill has no bound";
  EXPECT_EQ(lines[2].rfind("\"" + model + "\",\"f32\",1,\"tg4\",", 0), 0u) << lines[2];
  EXPECT_NE(lines[2].back(), ',') << "decode has its bound";
}

TEST(bench, BadFlagsFailWithOneLine) {
  const std::string model = testing::Stories260K();
  TOYLLM_REQUIRE_FILE(model);
  for (const std::vector<std::string>& flags :
       std::vector<std::vector<std::string>>{{"-o", "xml"}, {"-pg", "8"}, {"-pg", "8,4,2"}, {"-pg", "0,4"},
                                             {"-p", "-1"}, {"-n", "x"}, {"-d", "1,,2"}, {"-p", "0", "-n", "0"},
                                             {"-t", "0"}, {"-ctk", "q4"}, {"-ctv", "bf16"}}) {
    std::vector<std::string> args = {"bench", "-m", model, "-r", "1"};
    args.insert(args.end(), flags.begin(), flags.end());
    const RunResult r = RunToyllm(args, kTimeout);
    EXPECT_EQ(r.exit_code, 1) << testing::QuotedArgs(flags) << testing::Describe(r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("toyllm bench: ", 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// The probe runs over any size a model's token may read, down to less than a page per
// thread (rounded up to one), and fails cleanly on sizes it cannot allocate.
TEST(bandwidth, ProbesAnySizeAndFailsCleanly) {
  for (int threads : {1, 2}) {
    for (int64_t bytes : {int64_t{1}, int64_t{4096}, int64_t{3} << 20}) {
      absl::StatusOr<double> gbs = MeasureReadBandwidth(threads, bytes);
      ASSERT_TRUE(gbs.ok()) << gbs.status();
      EXPECT_GT(*gbs, 0.0) << threads << " threads, " << bytes << " bytes";
    }
  }
  absl::StatusOr<double> huge = MeasureReadBandwidth(1, int64_t{1} << 60);
  EXPECT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("bandwidth"), absl::string_view::npos) << huge.status();
}

// Per layer: wq and wo [dim, q_dim], wk and wv [kv_dim, dim], w1 w2 w3 [hidden, dim].
int64_t LayerWeights(const ModelConfig& c) {
  return int64_t{c.dim} * (2 * c.q_dim() + 2 * c.kv_dim() + 3 * c.hidden_dim);
}

TEST(bench, WeightBytesOfATiedFloat32Checkpoint) {
  const std::string path = testing::Stories260K();
  TOYLLM_REQUIRE_FILE(path);
  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelConfig& c = (*model)->config;
  ASSERT_TRUE(c.tied_output);
  // The embedding is read whole, as the output projection.
  EXPECT_EQ(WeightBytesPerToken(**model),
            4 * (c.n_layers * LayerWeights(c) + int64_t{c.vocab_size} * c.dim));
  EXPECT_EQ(LayerWeightType(**model), "f32");
}

class convert_random : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::TempDir(); }
  void TearDown() override { testing::RemoveTempDir(dir_); }

  std::string Write(const std::string& name, const std::vector<std::string>& flags) {
    const std::string path = dir_ + "/" + name;
    std::vector<std::string> args = {"convert", "--random", "15M", "-o", path};
    args.insert(args.end(), flags.begin(), flags.end());
    const RunResult r = RunToyllm(args, kTimeout);
    EXPECT_TRUE(testing::Succeeds(r));
    return path;
  }

  std::string dir_;
};

TEST_F(convert_random, SameSeedSameBytes) {
  const std::string a = Write("a.gguf", {"--type", "q8_0"});
  const std::string b = Write("b.gguf", {"--type", "q8_0", "--seed", "1"});
  const std::string c = Write("c.gguf", {"--type", "q8_0", "--seed", "2"});
  const std::string bytes = ReadFile(a);
  ASSERT_GT(bytes.size(), 20'000'000u);
  EXPECT_TRUE(bytes == ReadFile(b)) << "the default seed is 1";
  const std::string other = ReadFile(c);
  EXPECT_EQ(other.size(), bytes.size());
  EXPECT_FALSE(other == bytes) << "another seed, other weights";
}

TEST_F(convert_random, LoadsWithTheShapeTypeAndWeightsAsked) {
  const std::string path = Write("r.gguf", {"--type", "q8_0"});
  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelConfig& c = (*model)->config;
  // The 15M shape, written out independently of the shape table.
  EXPECT_EQ(c.dim, 288);
  EXPECT_EQ(c.hidden_dim, 768);
  EXPECT_EQ(c.n_layers, 6);
  EXPECT_EQ(c.n_heads, 6);
  EXPECT_EQ(c.n_kv_heads, 6);
  EXPECT_EQ(c.vocab_size, 32000);
  EXPECT_EQ(c.context_length, 256);
  EXPECT_FALSE(c.tied_output);
  EXPECT_TRUE((*model)->vocabulary.empty());
  for (const ModelFile::Tensor& t : (*model)->tensors) {
    EXPECT_EQ(t.type, t.dims.size() == 2 ? "q8_0" : "f32") << t.name;
  }
  EXPECT_EQ(LayerWeightType(**model), "q8_0");
  // q8_0: 34 bytes per 32 weights; every row of this shape is whole blocks.
  EXPECT_EQ(WeightBytesPerToken(**model),
            (c.n_layers * LayerWeights(c) + int64_t{c.vocab_size} * c.dim + c.dim) / 32 * 34);

  // Weights ~ N(0, 0.02²), norms 1; the matrix is used in place as q8_0 blocks.
  const Matrix& wq = (*model)->weights.layers[3].wq;
  ASSERT_EQ(wq.type, WeightType::kQ8_0);
  double sum = 0, squares = 0;
  const int64_t n = int64_t{wq.rows} * wq.cols;
  std::vector<float> row(wq.cols);
  for (int r = 0; r < wq.rows; ++r) {
    ToFloat32(wq.type, wq.row(r), wq.cols, row.data());
    for (float x : row) {
      sum += x;
      squares += double{x} * x;
    }
  }
  EXPECT_NEAR(sum / n, 0.0, 0.001);
  EXPECT_NEAR(std::sqrt(squares / n), 0.02, 0.001);
  for (int i = 0; i < c.dim; ++i) ASSERT_EQ((*model)->weights.layers[5].ffn_norm[i], 1.0f);
}

TEST_F(convert_random, InfoAndBenchRunItGenerateAsksForATokenizer) {
  const std::string path = Write("r.gguf", {"--type", "f16"});
  const RunResult info = RunToyllm({"info", "-m", path}, kTimeout);
  ASSERT_TRUE(testing::Succeeds(info));
  for (const char* expected : {"dim:             288", "hidden_dim:      768", "layers:          6",
                               "vocab_size:      32000", "context_length:  256", "\"random 15M\"",
                               "blk.5.ffn_up.weight"}) {
    EXPECT_NE(info.out.find(expected), std::string::npos) << expected << "\n" << info.out;
  }
  const RunResult bench = RunToyllm({"bench", "-m", path, "-p", "4", "-n", "2", "-t", "1", "-r", "1", "--json"},
                                    kTimeout);
  ASSERT_TRUE(testing::Succeeds(bench));
  const std::vector<std::string> lines = Lines(bench.out);
  ASSERT_EQ(lines.size(), 2u) << bench.out;
  for (const std::string& line : lines) CheckJsonLine(line, path, "f16");

  const RunResult generate = RunToyllm({"generate", "-m", path, "-n", "2"}, kTimeout);
  EXPECT_EQ(generate.exit_code, 1) << testing::Describe(generate);
  EXPECT_NE(generate.err.find("no --tokenizer given, none inside the model file"), std::string::npos) << generate.err;
  EXPECT_EQ(std::count(generate.err.begin(), generate.err.end(), '\n'), 1) << generate.err;
}

TEST(benchmark_shapes, TinyLlamaShapeIsGroupedQuery) {
  absl::StatusOr<ModelConfig> c = BenchmarkConfig("1.1B");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(ValidateConfig(*c).ok());
  EXPECT_EQ(c->n_kv_heads, 4);
  EXPECT_EQ(c->head_dim, 64);
  EXPECT_EQ(c->kv_dim(), 256);
  // TinyLlama-1.1B's parameter count.
  EXPECT_NEAR(ParameterCount(*c) / 1e9, 1.1, 0.01);
  EXPECT_FALSE(BenchmarkConfig("7B").ok());
}

TEST(benchmark_shapes, RealShapesHaveTheirModelsParameterCountsAndOptions) {
  absl::StatusOr<ModelConfig> llama = BenchmarkConfig("llama3.2-1b");
  ASSERT_TRUE(llama.ok()) << llama.status();
  EXPECT_TRUE(ValidateConfig(*llama).ok());
  // Llama-3.2-1B's 1,235,814,400 weights, and its 32 RoPE frequency factors.
  EXPECT_EQ(ParameterCount(*llama), 1235814400 + 32);
  EXPECT_TRUE(llama->tied_output);
  EXPECT_EQ(llama->rope_layout, RopeLayout::kInterleaved);
  ASSERT_EQ(llama->rope_freq_factors.size(), 32u);
  EXPECT_EQ(llama->rope_freq_factors.front(), 1.0f);
  EXPECT_EQ(llama->rope_freq_factors.back(), 32.0f);  // Llama 3.2's factor

  absl::StatusOr<ModelConfig> qwen = BenchmarkConfig("qwen2.5-0.5b");
  ASSERT_TRUE(qwen.ok()) << qwen.status();
  EXPECT_TRUE(ValidateConfig(*qwen).ok());
  EXPECT_EQ(ParameterCount(*qwen), 494032768);  // Qwen2.5-0.5B's
  EXPECT_TRUE(qwen->qkv_bias);
  EXPECT_TRUE(qwen->tied_output);
  EXPECT_EQ(qwen->rope_layout, RopeLayout::kHalfSplit);
  EXPECT_EQ(qwen->group_size(), 7);
}

// A random model of a family keeps the family's tensors: random biases, unit q/k norms and
// the config's frequency factors (never random ones).
TEST(benchmark_shapes, RandomModelsKeepTheirFamilysTensors) {
  const std::string dir = testing::TempDir();
  for (const char* family : {"qwen2", "qwen3", "llama"}) {
    SCOPED_TRACE(family);
    ModelConfig c;
    c.dim = 64;
    c.hidden_dim = 96;
    c.n_layers = 2;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.head_dim = std::string(family) == "qwen3" ? 32 : 16;
    c.vocab_size = 100;
    c.context_length = 32;
    c.tied_output = true;
    c.qkv_bias = std::string(family) == "qwen2";
    c.qk_norm = std::string(family) == "qwen3";
    c.rope_layout = std::string(family) == "llama" ? RopeLayout::kInterleaved : RopeLayout::kHalfSplit;
    if (std::string(family) == "llama") c.rope_freq_factors = {1, 1, 1, 2, 3, 5, 8, 8};
    const std::string path = dir + "/" + family + ".gguf";
    ASSERT_TRUE(WriteRandomLlamaGguf(path, c, 3, ExportOptions{}).ok());
    absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path);
    ASSERT_TRUE(model.ok()) << model.status();
    const ModelConfig& r = (*model)->config;
    EXPECT_EQ((*model)->format, std::string("GGUF v3 (") + family + ")");
    EXPECT_EQ(r.rope_freq_factors, c.rope_freq_factors);
    EXPECT_EQ(r.qkv_bias, c.qkv_bias);
    EXPECT_EQ(r.qk_norm, c.qk_norm);
    const toyllm::LayerWeights& l = (*model)->weights.layers[1];
    if (c.qkv_bias) {
      EXPECT_NE(l.bq[0], l.bq[1]);
      EXPECT_LT(std::fabs(l.bv[3]), 0.2f);
    }
    if (c.qk_norm) {
      EXPECT_EQ(l.k_norm[c.head_dim - 1], 1.0f);
    }
    EXPECT_EQ(testing::AllLogits(**model, {1, 2, 3}).size(), 300u);
  }
  testing::RemoveTempDir(dir);
}

}  // namespace
}  // namespace toyllm
