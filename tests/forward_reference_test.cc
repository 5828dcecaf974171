// Checks toyllm's forward pass against an independent reference written here: plain loops
// in double precision, one position at a time, attention recomputed over every stored key
// and value (no BLAS, no batching, no KV-cache layout). The reference reads the llama2.c
// checkpoint with its own parser and calls no toyllm function, so a shared mistake in the
// reader, the ops, RoPE, the cache or the batching cannot cancel out.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "models/llama_gguf_export.h"
#include "models/model_file.h"
#include "runtime/generate.h"
#include "runtime/model_config.h"
#include "runtime/ops.h"
#include "runtime/taps.h"
#include "runtime/transformer.h"
#include "runtime/weights.h"
#include "tests/test_env.h"
#include "tests/test_util.h"

namespace toyllm {
namespace {

// Logits of toyllm (float32, BLAS) and of the double-precision reference must agree this well.
constexpr double kLogitTolerance = 1e-4;
// Attention weights lie in [0, 1], so they can be held to a tighter bound.
constexpr double kWeightTolerance = 1e-5;

// ---------------------------------------------------------------------------------------
// The reference model: the weights as plain row-major float arrays (a linear layer W
// [rows, cols] maps x to W·x), the way llama2.c stores them.

struct RefLayer {
  std::vector<float> attn_norm;  // [dim]
  std::vector<float> wq;         // [n_heads * head_dim, dim]
  std::vector<float> wk;         // [n_kv_heads * head_dim, dim]
  std::vector<float> wv;         // [n_kv_heads * head_dim, dim]
  std::vector<float> wo;         // [dim, n_heads * head_dim]
  std::vector<float> ffn_norm;   // [dim]
  std::vector<float> w1;         // [hidden, dim]
  std::vector<float> w2;         // [dim, hidden]
  std::vector<float> w3;         // [hidden, dim]
  // Empty unless the model has them (Qwen 2's biases, Qwen 3's per-head norms):
  std::vector<float> bq, bk, bv;       // [q_dim], [kv_dim], [kv_dim]
  std::vector<float> q_norm, k_norm;   // [head_dim]
};

struct RefModel {
  int dim = 0;
  int hidden_dim = 0;
  int n_layers = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int vocab_size = 0;
  int seq_len = 0;
  bool tied = false;              // classifier is a copy of the embedding
  double eps = 1e-5;              // of every RMSNorm
  double theta = 10000.0;         // RoPE base
  bool half_split = false;        // RoPE pairs (j, j + d/2) instead of (2j, 2j+1)
  std::vector<float> freq_factors;  // divisors of each pair's frequency; empty: none
  std::vector<float> embedding;   // [vocab, dim]
  std::vector<RefLayer> layers;
  std::vector<float> final_norm;  // [dim]
  std::vector<float> classifier;  // [vocab, dim]

  int q_dim() const { return n_heads * head_dim; }
  int kv_dim() const { return n_kv_heads * head_dim; }
};

// What the reference computes for a token sequence.
struct RefOutput {
  std::vector<std::vector<double>> logits;  // [position][vocab]
  // attention[layer][head][position]: softmax weights over keys 0..position.
  std::vector<std::vector<std::vector<std::vector<double>>>> attention;
};

using Vec = std::vector<double>;

// W·x for a row-major W [rows, cols].
Vec MatVec(const std::vector<float>& w, int rows, int cols, const Vec& x) {
  Vec y(rows, 0.0);
  for (int r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int c = 0; c < cols; ++c) sum += double{w[static_cast<size_t>(r) * cols + c]} * x[c];
    y[r] = sum;
  }
  return y;
}

// weight ⊙ x / sqrt(mean(x²) + eps).
Vec RmsNorm(const Vec& x, const std::vector<float>& weight, double eps) {
  double ss = 0.0;
  for (double v : x) ss += v * v;
  const double scale = 1.0 / std::sqrt(ss / x.size() + eps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = weight[i] * x[i] * scale;
  return y;
}

// Rotates every head of x (n_heads heads of head_dim) in place: pair j, which is (2j, 2j+1)
// or (j, j + head_dim/2), turns by pos · theta^(-2j / head_dim) / freq_factors[j].
void Rotate(const RefModel& m, Vec& x, int n_heads, int pos) {
  const int head_dim = m.head_dim;
  for (int h = 0; h < n_heads; ++h) {
    for (int j = 0; j < head_dim / 2; ++j) {
      double freq = std::pow(m.theta, -2.0 * j / head_dim);
      if (!m.freq_factors.empty()) freq /= m.freq_factors[j];
      const double c = std::cos(pos * freq), s = std::sin(pos * freq);
      double& a = x[h * head_dim + (m.half_split ? j : 2 * j)];
      double& b = x[h * head_dim + (m.half_split ? j + head_dim / 2 : 2 * j + 1)];
      const double a0 = a, b0 = b;
      a = a0 * c - b0 * s;
      b = a0 * s + b0 * c;
    }
  }
}

// x + b, or x when b is empty.
Vec AddBias(Vec x, const std::vector<float>& b) {
  for (size_t i = 0; i < b.size(); ++i) x[i] += b[i];
  return x;
}

// Every head of x normalised on its own with the shared weight, or x when it is empty.
Vec NormalizeHeads(const RefModel& m, const Vec& x, const std::vector<float>& weight) {
  if (weight.empty()) return x;
  Vec y;
  for (size_t h = 0; h < x.size(); h += m.head_dim) {
    const Vec head = RmsNorm(Vec(x.begin() + h, x.begin() + h + m.head_dim), weight, m.eps);
    y.insert(y.end(), head.begin(), head.end());
  }
  return y;
}

void SoftmaxInPlace(Vec& x) {
  double max = x[0];
  for (double v : x) max = std::max(max, v);
  double sum = 0.0;
  for (double& v : x) sum += (v = std::exp(v - max));
  for (double& v : x) v /= sum;
}

// The forward pass as the textbook writes it, one position after another. Each position
// stores its rotated key and value and attends over all stored ones (0..t): causality comes
// from simply not having computed the later ones yet.
RefOutput ReferenceForward(const RefModel& m, const std::vector<int>& tokens) {
  const int n = static_cast<int>(tokens.size());
  const int hd = m.head_dim;
  const int group = m.n_heads / m.n_kv_heads;  // query heads per kv head
  RefOutput out;
  out.attention.assign(m.n_layers, std::vector<std::vector<Vec>>(m.n_heads));
  std::vector<std::vector<Vec>> keys(m.n_layers), values(m.n_layers);  // [layer][position]

  for (int t = 0; t < n; ++t) {
    Vec x(m.embedding.begin() + static_cast<size_t>(tokens[t]) * m.dim,
          m.embedding.begin() + static_cast<size_t>(tokens[t] + 1) * m.dim);
    for (int l = 0; l < m.n_layers; ++l) {
      const RefLayer& w = m.layers[l];
      Vec h = RmsNorm(x, w.attn_norm, m.eps);
      Vec q = NormalizeHeads(m, AddBias(MatVec(w.wq, m.q_dim(), m.dim, h), w.bq), w.q_norm);
      Vec k = NormalizeHeads(m, AddBias(MatVec(w.wk, m.kv_dim(), m.dim, h), w.bk), w.k_norm);
      const Vec v = AddBias(MatVec(w.wv, m.kv_dim(), m.dim, h), w.bv);
      Rotate(m, q, m.n_heads, t);
      Rotate(m, k, m.n_kv_heads, t);
      keys[l].push_back(k);
      values[l].push_back(v);

      Vec heads(m.q_dim(), 0.0);
      for (int head = 0; head < m.n_heads; ++head) {
        const int kv = head / group;
        Vec weights(t + 1);
        for (int p = 0; p <= t; ++p) {
          double dot = 0.0;
          for (int i = 0; i < hd; ++i) dot += q[head * hd + i] * keys[l][p][kv * hd + i];
          weights[p] = dot / std::sqrt(static_cast<double>(hd));
        }
        SoftmaxInPlace(weights);
        for (int p = 0; p <= t; ++p) {
          for (int i = 0; i < hd; ++i) {
            heads[head * hd + i] += weights[p] * values[l][p][kv * hd + i];
          }
        }
        out.attention[l][head].push_back(weights);
      }
      const Vec attn_out = MatVec(w.wo, m.dim, m.q_dim(), heads);
      for (int i = 0; i < m.dim; ++i) x[i] += attn_out[i];

      h = RmsNorm(x, w.ffn_norm, m.eps);
      Vec gate = MatVec(w.w1, m.hidden_dim, m.dim, h);
      const Vec up = MatVec(w.w3, m.hidden_dim, m.dim, h);
      for (int i = 0; i < m.hidden_dim; ++i) gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
      const Vec ffn_out = MatVec(w.w2, m.dim, m.hidden_dim, gate);
      for (int i = 0; i < m.dim; ++i) x[i] += ffn_out[i];
    }
    out.logits.push_back(MatVec(m.classifier, m.vocab_size, m.dim, RmsNorm(x, m.final_norm, m.eps)));
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// The reference's own reader of llama2.c's legacy format (../shared/README.md): seven int32,
// then float32 arrays, each kind stored for all layers before the next kind.

void ReadFloats(std::ifstream& in, size_t count, std::vector<float>* out) {
  out->resize(count);
  in.read(reinterpret_cast<char*>(out->data()),
          static_cast<std::streamsize>(count * sizeof(float)));
}

void ReadLegacyCheckpoint(const std::string& path, RefModel* m) {
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path;
  int32_t header[7];
  in.read(reinterpret_cast<char*>(header), sizeof(header));
  ASSERT_TRUE(in) << path;
  m->dim = header[0];
  m->hidden_dim = header[1];
  m->n_layers = header[2];
  m->n_heads = header[3];
  m->n_kv_heads = header[4];
  m->tied = header[5] > 0;  // a negative vocab_size means a separate classifier at the end
  m->vocab_size = std::abs(header[5]);
  m->seq_len = header[6];
  m->head_dim = m->dim / m->n_heads;

  const size_t dim = m->dim, hidden = m->hidden_dim, kv_dim = m->kv_dim();
  ReadFloats(in, m->vocab_size * dim, &m->embedding);
  m->layers.resize(m->n_layers);
  for (RefLayer& l : m->layers) ReadFloats(in, dim, &l.attn_norm);
  for (RefLayer& l : m->layers) ReadFloats(in, dim * dim, &l.wq);
  for (RefLayer& l : m->layers) ReadFloats(in, kv_dim * dim, &l.wk);
  for (RefLayer& l : m->layers) ReadFloats(in, kv_dim * dim, &l.wv);
  for (RefLayer& l : m->layers) ReadFloats(in, dim * dim, &l.wo);
  for (RefLayer& l : m->layers) ReadFloats(in, dim, &l.ffn_norm);
  for (RefLayer& l : m->layers) ReadFloats(in, hidden * dim, &l.w1);
  for (RefLayer& l : m->layers) ReadFloats(in, dim * hidden, &l.w2);
  for (RefLayer& l : m->layers) ReadFloats(in, hidden * dim, &l.w3);
  ReadFloats(in, dim, &m->final_norm);
  std::vector<float> unused_rope_tables;  // freq_cis_real and freq_cis_imag
  ReadFloats(in, 2 * static_cast<size_t>(m->seq_len) * (m->head_dim / 2), &unused_rope_tables);
  if (m->tied) {
    m->classifier = m->embedding;
  } else {
    ReadFloats(in, m->vocab_size * dim, &m->classifier);
  }
  ASSERT_TRUE(in) << path << " is shorter than its header implies";
  in.peek();
  ASSERT_TRUE(in.eof()) << path << " has bytes after the last array";
}

// ---------------------------------------------------------------------------------------
// Running toyllm and comparing.

// Ids spread over the vocabulary, reproducible everywhere (plain mt19937 output, no
// distribution whose algorithm the standard leaves open).
std::vector<int> PseudoRandomTokens(int n, int vocab_size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int> tokens(n);
  for (int& t : tokens) t = static_cast<int>(rng() % vocab_size);
  return tokens;
}

std::unique_ptr<Transformer> MakeTransformer(const ModelConfig& config,
                                             const ModelWeights& weights, int max_batch) {
  absl::StatusOr<std::unique_ptr<Transformer>> t =
      Transformer::Create(config, weights, config.context_length, max_batch);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

// All logits [n, vocab] from Prefill, which splits the sequence into max_batch chunks.
std::vector<float> LogitsByPrefill(const ModelConfig& config, const ModelWeights& weights,
                                   const std::vector<int>& tokens, int max_batch) {
  return testing::AllLogits(config, weights, tokens, config.context_length, max_batch);
}

// All logits [n, vocab] from Forward calls of the given sizes (cycled), each asking for all
// positions of its chunk; sizes 1 give token-by-token decoding.
std::vector<float> LogitsByChunks(const ModelConfig& config, const ModelWeights& weights,
                                  const std::vector<int>& tokens, int max_batch,
                                  const std::vector<int>& chunk_sizes) {
  std::unique_ptr<Transformer> t = MakeTransformer(config, weights, max_batch);
  if (t == nullptr) return {};
  std::vector<float> all;
  const int n = static_cast<int>(tokens.size());
  for (int pos = 0, i = 0; pos < n; ++i) {
    const int size = std::min(chunk_sizes[i % chunk_sizes.size()], n - pos);
    absl::StatusOr<absl::Span<const float>> out = t->Forward(
        absl::MakeConstSpan(tokens).subspan(pos, size), pos, Transformer::Logits::kAll);
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {};
    all.insert(all.end(), out->begin(), out->end());
    pos += size;
  }
  return all;
}

// Largest |toyllm - reference| over every logit of every position; fails the test when it
// exceeds the tolerance, naming the worst position and vocabulary entry.
void ExpectLogitsMatch(const std::vector<float>& actual, const RefOutput& ref,
                       const std::string& what) {
  const size_t n = ref.logits.size(), vocab = ref.logits[0].size();
  ASSERT_EQ(actual.size(), n * vocab) << what;
  double worst = 0.0;
  size_t worst_pos = 0, worst_id = 0;
  for (size_t p = 0; p < n; ++p) {
    for (size_t v = 0; v < vocab; ++v) {
      const double diff = std::abs(actual[p * vocab + v] - ref.logits[p][v]);
      // A NaN, once seen, stays the worst: it fails the comparison below.
      if (diff > worst || (std::isnan(diff) && !std::isnan(worst))) {
        worst = diff;
        worst_pos = p;
        worst_id = v;
      }
    }
  }
  EXPECT_LE(worst, kLogitTolerance)
      << what << ": position " << worst_pos << ", id " << worst_id << ": toyllm "
      << actual[worst_pos * vocab + worst_id] << ", reference " << ref.logits[worst_pos][worst_id];
  std::cout << "[ measured ] " << what << ": max |logit - reference| = " << worst << "\n";
}

// The reference logits must not be degenerate, or agreement would prove little.
void ExpectInformativeLogits(const RefOutput& ref) {
  double spread = 0.0;
  for (const Vec& row : ref.logits) {
    spread = std::max(spread, *std::max_element(row.begin(), row.end()) -
                                  *std::min_element(row.begin(), row.end()));
  }
  EXPECT_GT(spread, 1.0);
}

// ---------------------------------------------------------------------------------------
// stories260K: a real trained checkpoint.

// Suites are named after the file so that `ctest -R forward_reference` selects them.
class forward_reference : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::Stories260K();
    TOYLLM_REQUIRE_FILE(path_);
    ASSERT_NO_FATAL_FAILURE(ReadLegacyCheckpoint(path_, &ref_model_));
    absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path_);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    // Longer than one default batch, so Prefill needs a second, shorter Forward call.
    tokens_ = PseudoRandomTokens(kTokens, ref_model_.vocab_size, 2024);
    tokens_[0] = 1;  // BOS, as generation starts
    reference_ = ReferenceForward(ref_model_, tokens_);
  }

  static constexpr int kTokens = 80;
  static_assert(kTokens > Transformer::kDefaultMaxBatch);

  std::string path_;
  RefModel ref_model_;
  std::unique_ptr<ModelFile> model_;
  std::vector<int> tokens_;
  RefOutput reference_;
};

TEST_F(forward_reference, PrefillAcrossTheBatchBoundaryMatchesReference) {
  ExpectInformativeLogits(reference_);
  ExpectLogitsMatch(LogitsByPrefill(model_->config, model_->weights, tokens_,
                                    Transformer::kDefaultMaxBatch),
                    reference_, "stories260K Prefill kAll, batch 64");
}

TEST_F(forward_reference, TokenByTokenMatchesReference) {
  ExpectLogitsMatch(LogitsByChunks(model_->config, model_->weights, tokens_,
                                   Transformer::kDefaultMaxBatch, {1}),
                    reference_, "stories260K token by token");
}

TEST_F(forward_reference, RaggedBatchesMatchReference) {
  ExpectLogitsMatch(LogitsByPrefill(model_->config, model_->weights, tokens_, 7), reference_,
                    "stories260K Prefill, batch 7");
  // Chunks of uneven sizes, so batches start at positions that are no multiple of anything.
  ExpectLogitsMatch(LogitsByChunks(model_->config, model_->weights, tokens_, 7, {7, 2, 5, 1, 3}),
                    reference_, "stories260K chunks 7,2,5,1,3");
}

TEST_F(forward_reference, LastLogitsAreTheLastRowOfAll) {
  std::unique_ptr<Transformer> t = MakeTransformer(model_->config, model_->weights, 64);
  ASSERT_NE(t, nullptr);
  absl::StatusOr<std::vector<float>> last = Prefill(*t, tokens_, 0, Transformer::Logits::kLast);
  ASSERT_TRUE(last.ok()) << last.status();
  ASSERT_EQ(last->size(), static_cast<size_t>(ref_model_.vocab_size));
  RefOutput only_last = reference_;
  only_last.logits = {reference_.logits.back()};
  ExpectLogitsMatch(*last, only_last, "stories260K Prefill kLast");
}

// Collects every blk.L.weights row a forward pass offers, keyed by (layer, head, position).
class AttentionWeightsRecorder : public TapObserver {
 public:
  void Observe(const TapData& tap) override {
    if (tap.tap != Tap::kWeights) return;
    for (int r = 0; r < tap.rows; ++r) {
      const float* row = tap.data + static_cast<size_t>(r) * tap.cols;
      std::vector<float>& dst = rows[{tap.layer, tap.head, tap.pos + r}];
      EXPECT_TRUE(dst.empty()) << "row delivered twice: layer " << tap.layer << " head "
                               << tap.head << " position " << tap.pos + r;
      dst.assign(row, row + tap.cols);
    }
  }

  std::map<std::tuple<int, int, int>, std::vector<float>> rows;
};

// At 2 threads the heads run on both and offer their taps from there, in any order.
class forward_reference_threads : public forward_reference,
                                  public ::testing::WithParamInterface<int> {
 protected:
  void SetUp() override {
    forward_reference::SetUp();
    SetThreadCount(GetParam());
  }
  void TearDown() override { SetThreadCount(1); }
};

TEST_P(forward_reference_threads, AttentionWeightTapsAreCausalSoftmaxesEqualToReference) {
  std::unique_ptr<Transformer> t = MakeTransformer(model_->config, model_->weights, 64);
  ASSERT_NE(t, nullptr);
  AttentionWeightsRecorder recorder;
  t->set_observer(&recorder);
  ASSERT_TRUE(Prefill(*t, tokens_, 0, Transformer::Logits::kLast).ok());

  const RefModel& m = ref_model_;
  ASSERT_EQ(recorder.rows.size(), static_cast<size_t>(m.n_layers) * m.n_heads * kTokens);
  double worst = 0.0;
  for (const auto& [key, row] : recorder.rows) {
    const auto [layer, head, pos] = key;
    SCOPED_TRACE(::testing::Message() << "blk." << layer << ".weights head " << head
                                    << " position " << pos);
    ASSERT_GE(layer, 0);
    ASSERT_LT(layer, m.n_layers);
    ASSERT_GE(head, 0);
    ASSERT_LT(head, m.n_heads);
    ASSERT_GT(static_cast<int>(row.size()), pos);  // sees at least keys 0..pos
    double sum = 0.0;
    for (size_t key_pos = 0; key_pos < row.size(); ++key_pos) {
      if (static_cast<int>(key_pos) > pos) {
        ASSERT_EQ(row[key_pos], 0.0f) << "key " << key_pos << " is in the future";
        continue;
      }
      sum += row[key_pos];
      const double diff = std::abs(row[key_pos] - reference_.attention[layer][head][pos][key_pos]);
      worst = std::max(worst, diff);
      ASSERT_LE(diff, kWeightTolerance) << "key " << key_pos;
    }
    ASSERT_NEAR(sum, 1.0, 1e-5);
  }
  std::cout << "[ measured ] stories260K max |attention weight - reference| = " << worst << "\n";
}

INSTANTIATE_TEST_SUITE_P(threads, forward_reference_threads, ::testing::Values(1, 2));

// ---------------------------------------------------------------------------------------
// A synthetic model: random weights of odd sizes, an untied classifier, and a context the
// sequence fills completely.

// What a model family adds to the Llama 2 block.
struct Family {
  const char* name = "llama2";
  bool bias = false;               // Qwen 2: q/k/v biases
  bool qk_norm = false;            // Qwen 3: per-head q/k RMSNorm
  bool half_split = false;         // Qwen: NeoX RoPE
  std::vector<float> freq_factors;  // Llama 3.1: per-pair frequency divisors
  double theta = 10000.0;
  double eps = 1e-5;
  int head_dim = 4;                // Qwen 3 heads are wider than dim / n_heads
  bool tied = false;
  int hidden_dim = 24;
};

void PrintTo(const Family& f, std::ostream* os) { *os << f.name; }

RefModel RandomModel(uint32_t seed, const Family& f = {}) {
  RefModel m;
  m.dim = 16;
  m.hidden_dim = f.hidden_dim;
  m.n_layers = 2;
  m.n_heads = 4;
  m.n_kv_heads = 2;
  m.head_dim = f.head_dim;
  m.vocab_size = 11;
  m.seq_len = 20;
  m.tied = f.tied;
  m.eps = f.eps;
  m.theta = f.theta;
  m.half_split = f.half_split;
  m.freq_factors = f.freq_factors;
  std::mt19937 rng(seed);
  // Uniform in [-scale, scale], from the raw generator output so it is the same everywhere.
  auto fill = [&rng](size_t n, double center, double scale) {
    std::vector<float> v(n);
    for (float& x : v) x = static_cast<float>(center + scale * (2.0 * rng() / 4294967295.0 - 1.0));
    return v;
  };
  const size_t dim = m.dim, hidden = m.hidden_dim;
  const double w = 1.0 / std::sqrt(static_cast<double>(dim));  // keeps activations O(1)
  m.embedding = fill(m.vocab_size * dim, 0.0, 1.0);
  m.layers.resize(m.n_layers);
  for (RefLayer& l : m.layers) {
    l.attn_norm = fill(dim, 1.0, 0.3);
    l.wq = fill(m.q_dim() * dim, 0.0, 2.0 * w);
    l.wk = fill(m.kv_dim() * dim, 0.0, 2.0 * w);
    l.wv = fill(m.kv_dim() * dim, 0.0, w);
    l.wo = fill(dim * m.q_dim(), 0.0, w);
    l.ffn_norm = fill(dim, 1.0, 0.3);
    l.w1 = fill(hidden * dim, 0.0, 2.0 * w);
    l.w2 = fill(dim * hidden, 0.0, w * std::sqrt(std::min(1.0, 24.0 / hidden)));
    l.w3 = fill(hidden * dim, 0.0, 2.0 * w);
  }
  m.final_norm = fill(dim, 1.0, 0.3);
  m.classifier = m.tied ? m.embedding : fill(m.vocab_size * dim, 0.0, 2.0);
  for (RefLayer& l : m.layers) {
    if (f.bias) {  // large enough to matter next to h·W
      l.bq = fill(m.q_dim(), 0.0, 1.0);
      l.bk = fill(m.kv_dim(), 0.0, 1.0);
      l.bv = fill(m.kv_dim(), 0.0, 1.0);
    }
    if (f.qk_norm) {
      l.q_norm = fill(m.head_dim, 1.0, 0.5);
      l.k_norm = fill(m.head_dim, 1.0, 0.5);
    }
  }
  return m;
}

// toyllm's config and weight views over the reference model's arrays: both run on the very
// same numbers.
struct ToyllmView {
  ModelConfig config;
  ModelWeights weights;
};

ToyllmView ViewOf(const RefModel& m) {
  ToyllmView v;
  ModelConfig& c = v.config;
  c.dim = m.dim;
  c.hidden_dim = m.hidden_dim;
  c.n_layers = m.n_layers;
  c.n_heads = m.n_heads;
  c.n_kv_heads = m.n_kv_heads;
  c.head_dim = m.head_dim;
  c.vocab_size = m.vocab_size;
  c.context_length = m.seq_len;
  c.norm_eps = static_cast<float>(m.eps);
  c.rope_theta = static_cast<float>(m.theta);
  c.rope_layout = m.half_split ? RopeLayout::kHalfSplit : RopeLayout::kInterleaved;
  c.rope_freq_factors = m.freq_factors;
  c.tied_output = m.tied;
  c.qkv_bias = !m.layers[0].bq.empty();
  c.qk_norm = !m.layers[0].q_norm.empty();
  auto matrix = [](const std::vector<float>& data, int rows, int cols) {
    EXPECT_EQ(data.size(), static_cast<size_t>(rows) * cols);
    return Matrix{data.data(), rows, cols};
  };
  ModelWeights& w = v.weights;
  w.token_embedding = matrix(m.embedding, m.vocab_size, m.dim);
  for (const RefLayer& l : m.layers) {
    w.layers.push_back(LayerWeights{
        l.attn_norm.data(), matrix(l.wq, m.q_dim(), m.dim), matrix(l.wk, m.kv_dim(), m.dim),
        matrix(l.wv, m.kv_dim(), m.dim), matrix(l.wo, m.dim, m.q_dim()), l.ffn_norm.data(),
        matrix(l.w1, m.hidden_dim, m.dim), matrix(l.w2, m.dim, m.hidden_dim),
        matrix(l.w3, m.hidden_dim, m.dim)});
    LayerWeights& lw = w.layers.back();
    for (auto [view, data] : {std::pair{&lw.bq, &l.bq}, std::pair{&lw.bk, &l.bk}, std::pair{&lw.bv, &l.bv},
                              std::pair{&lw.q_norm, &l.q_norm}, std::pair{&lw.k_norm, &l.k_norm}}) {
      *view = data->empty() ? nullptr : data->data();
    }
  }
  w.output_norm = m.final_norm.data();
  w.output = matrix(m.classifier, m.vocab_size, m.dim);
  return v;
}

// A batch's feed-forward layer runs a slice of its hidden units at a time once the batch
// times the hidden units passes 2²⁰ (runtime/transformer.cc): with 56000 units, 20 rows go
// in a slice of 52224 and a ragged one of 3776, each adding its share of W2's product;
// batches of 7 and single rows go whole.
TEST(forward_reference_synthetic, EveryBatchingMatchesReference) {
  for (int hidden : {24, 56000}) {
    Family family;
    family.hidden_dim = hidden;
    const RefModel m = RandomModel(7, family);
    const ToyllmView view = ViewOf(m);
    const std::vector<int> tokens = PseudoRandomTokens(m.seq_len, m.vocab_size, 99);
    const RefOutput reference = ReferenceForward(m, tokens);
    ExpectInformativeLogits(reference);

    const std::string name = "synthetic, hidden " + std::to_string(hidden);
    ExpectLogitsMatch(LogitsByPrefill(view.config, view.weights, tokens, 64), reference,
                      name + ", one batch");
    ExpectLogitsMatch(LogitsByChunks(view.config, view.weights, tokens, 64, {1}), reference,
                      name + ", token by token");
    ExpectLogitsMatch(LogitsByPrefill(view.config, view.weights, tokens, 7), reference,
                      name + ", batch 7");
    ExpectLogitsMatch(LogitsByChunks(view.config, view.weights, tokens, 7, {3, 7, 1, 6}),
                      reference, name + ", chunks 3,7,1,6");
  }
}

// The families of the architecture issue, each option on its own and then together as the
// real models have them. Llama 3.1's factors are of the shape convert_hf_to_gguf.py
// computes: 1 for the fast pairs, up to 8 for the slow ones.
std::vector<Family> Families() {
  std::vector<Family> f(5);
  f[0].name = "qwen2";  // biases, NeoX RoPE, tied, Qwen's theta and eps
  f[0].bias = f[0].half_split = f[0].tied = true;
  f[0].theta = 1e6;
  f[0].eps = 1e-6;
  f[1].name = "qwen3";  // q/k norms, NeoX RoPE, heads of 6 (q_dim 24 > dim 16)
  f[1].qk_norm = f[1].half_split = true;
  f[1].head_dim = 6;
  f[1].theta = 1e6;
  f[1].eps = 1e-6;
  f[2].name = "llama31";  // frequency factors on interleaved pairs
  f[2].freq_factors = {1.0f, 2.6945300f};
  f[2].theta = 500000.0;
  f[3].name = "half_split";  // NeoX RoPE alone
  f[3].half_split = true;
  f[4].name = "llama_bias";  // biases alone, on a llama-architecture model
  f[4].bias = true;
  return f;
}

class forward_reference_family : public ::testing::TestWithParam<Family> {};

TEST_P(forward_reference_family, EveryBatchingMatchesReference) {
  const RefModel m = RandomModel(11, GetParam());
  const ToyllmView view = ViewOf(m);
  const std::vector<int> tokens = PseudoRandomTokens(m.seq_len, m.vocab_size, 5);
  const RefOutput reference = ReferenceForward(m, tokens);
  ExpectInformativeLogits(reference);
  const std::string name = GetParam().name;
  ExpectLogitsMatch(LogitsByPrefill(view.config, view.weights, tokens, 64), reference,
                    name + ", one batch");
  ExpectLogitsMatch(LogitsByChunks(view.config, view.weights, tokens, 7, {3, 1, 6}), reference,
                    name + ", chunks 3,1,6");
}

// The option must change the logits, or the test above could not tell it is applied.
TEST_P(forward_reference_family, TheOptionsChangeTheLogits) {
  const RefModel m = RandomModel(11, GetParam());
  RefModel plain = m;
  plain.half_split = false;
  plain.freq_factors.clear();
  for (RefLayer& l : plain.layers) l.bq = l.bk = l.bv = l.q_norm = l.k_norm = {};
  const std::vector<int> tokens = PseudoRandomTokens(m.seq_len, m.vocab_size, 5);
  const RefOutput with = ReferenceForward(m, tokens), without = ReferenceForward(plain, tokens);
  double moved = 0.0;
  for (size_t p = 0; p < with.logits.size(); ++p) {
    for (size_t v = 0; v < with.logits[p].size(); ++v) {
      moved = std::max(moved, std::abs(with.logits[p][v] - without.logits[p][v]));
    }
  }
  EXPECT_GT(moved, 100 * kLogitTolerance) << GetParam().name;
}

// Through the project's GGUF writer and reader: llama.cpp's architecture, keys and tensor
// names for each family, read back onto the same forward pass.
TEST_P(forward_reference_family, WrittenAsGgufAndReadBackMatchesReference) {
  const RefModel m = RandomModel(11, GetParam());
  const ToyllmView view = ViewOf(m);
  const std::string path = testing::TempDir() + "/" + GetParam().name + ".gguf";
  ExportOptions options;
  const absl::Status written = WriteLlamaGguf(path, view.config, view.weights, options);
  if (std::string(GetParam().name) == "half_split") {  // llama.cpp has no such architecture
    EXPECT_NE(written.message().find("un-permute Q and K first"), std::string::npos) << written;
    return;
  }
  ASSERT_TRUE(written.ok()) << written;
  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::string name = GetParam().name;
  const std::string arch = name == "qwen2" || name == "qwen3" ? name : "llama";
  EXPECT_EQ((*model)->format, "GGUF v3 (" + arch + ")");
  EXPECT_EQ((*model)->config.tied_output, m.tied);
  const std::vector<int> tokens = PseudoRandomTokens(m.seq_len, m.vocab_size, 5);
  ExpectLogitsMatch(testing::AllLogits(**model, tokens), ReferenceForward(m, tokens),
                    name + ", GGUF round trip");
}

INSTANTIATE_TEST_SUITE_P(families, forward_reference_family, ::testing::ValuesIn(Families()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace toyllm
