// Rotary position embedding against an independent reference in double, and the relation
// between Meta's interleaved layout and Hugging Face's half-split one
// (../shared/docs/formats.md §4.9 and §5.5).
#include "runtime/rope.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace toyllm {
namespace {

std::vector<float> RandomVector(std::mt19937& gen, size_t n) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(gen);
  return v;
}

// The angle of pair j at position pos, θ_j = theta^(-2j/d), in double.
double Angle(int pos, int j, int head_dim, double theta) {
  return pos * std::pow(theta, -2.0 * j / head_dim);
}

// Reference: each pair of every head, as a complex number, times e^{i·pos·θ_j}. The pair is
// (2j, 2j+1) when interleaved and (j, j + d/2) when half-split.
std::vector<double> ReferenceRope(const std::vector<float>& x, int n_rows, int n_heads,
                                  int head_dim, int pos, double theta, RopeLayout layout) {
  std::vector<double> out(x.begin(), x.end());
  const int half = head_dim / 2;
  for (int t = 0; t < n_rows; ++t) {
    for (int h = 0; h < n_heads; ++h) {
      const size_t base = (static_cast<size_t>(t) * n_heads + h) * head_dim;
      for (int j = 0; j < half; ++j) {
        const size_t re = base + (layout == RopeLayout::kInterleaved ? 2 * j : j);
        const size_t im = base + (layout == RopeLayout::kInterleaved ? 2 * j + 1 : j + half);
        const std::complex<double> z(x[re], x[im]);
        const std::complex<double> rotated = z * std::polar(1.0, Angle(pos + t, j, head_dim, theta));
        out[re] = rotated.real();
        out[im] = rotated.imag();
      }
    }
  }
  return out;
}

// float computes the angle pos·θ_j with a relative error of a few eps, i.e. an absolute
// error of a few pos·eps radians, which moves a rotated coordinate by that much times the
// pair's length (a few units for standard normal data). A wrong angle or pairing moves it
// by order one.
double RopeTolerance(int max_pos) { return 1e-5 + 2e-6 * max_pos; }

struct RopeShape {
  int head_dim;
  int n_heads;
  int n_rows;
  int pos;
  float theta;
};

class rope_layouts : public ::testing::TestWithParam<RopeLayout> {};

INSTANTIATE_TEST_SUITE_P(Layouts, rope_layouts,
                         ::testing::Values(RopeLayout::kInterleaved, RopeLayout::kHalfSplit),
                         [](const auto& info) {
                           return info.param == RopeLayout::kInterleaved ? "interleaved" : "half_split";
                         });

TEST_P(rope_layouts, MatchesComplexRotation) {
  const RopeLayout layout = GetParam();
  std::mt19937 gen(1);
  const RopeShape shapes[] = {
      {2, 1, 1, 0, 10000.0f},   {2, 3, 4, 5, 10000.0f},    {8, 8, 5, 0, 10000.0f},
      {8, 4, 3, 100, 10000.0f}, {16, 2, 17, 33, 10000.0f}, {64, 3, 2, 500, 10000.0f},
      {128, 2, 3, 1000, 500000.0f}, {6, 5, 7, 11, 10000.0f},
  };
  for (const RopeShape& s : shapes) {
    SCOPED_TRACE(::testing::Message() << "head_dim " << s.head_dim << " heads " << s.n_heads << " rows "
                                    << s.n_rows << " pos " << s.pos << " theta " << s.theta);
    const Rope rope(s.head_dim, s.theta, layout, s.pos + s.n_rows + 3);
    const std::vector<float> x0 = RandomVector(gen, static_cast<size_t>(s.n_rows) * s.n_heads * s.head_dim);
    std::vector<float> x = x0;
    x.push_back(7.0f);  // past the last row: must stay untouched
    rope.Apply(x.data(), s.n_rows, s.n_heads, s.pos);
    EXPECT_EQ(x.back(), 7.0f);
    const std::vector<double> expected =
        ReferenceRope(x0, s.n_rows, s.n_heads, s.head_dim, s.pos, s.theta, layout);
    for (size_t i = 0; i < x0.size(); ++i) {
      ASSERT_NEAR(x[i], expected[i], RopeTolerance(s.pos + s.n_rows)) << "index " << i;
    }
  }
}

TEST_P(rope_layouts, RowsAreAtConsecutivePositions) {
  // Applying to 5 rows at position 10 equals applying to each row alone at 10 + t.
  const RopeLayout layout = GetParam();
  std::mt19937 gen(2);
  const int head_dim = 8, n_heads = 4, n_rows = 5, pos = 10;
  const Rope rope(head_dim, 10000.0f, layout, 64);
  const std::vector<float> x0 = RandomVector(gen, n_rows * n_heads * head_dim);
  std::vector<float> together = x0;
  rope.Apply(together.data(), n_rows, n_heads, pos);
  for (int t = 0; t < n_rows; ++t) {
    std::vector<float> row(x0.begin() + t * n_heads * head_dim, x0.begin() + (t + 1) * n_heads * head_dim);
    rope.Apply(row.data(), 1, n_heads, pos + t);
    for (int i = 0; i < n_heads * head_dim; ++i) {
      EXPECT_EQ(together[t * n_heads * head_dim + i], row[i]) << "row " << t << " i " << i;
    }
  }
}

TEST_P(rope_layouts, PositionZeroIsIdentity) {
  std::mt19937 gen(3);
  for (int head_dim : {2, 8, 64}) {
    const Rope rope(head_dim, 10000.0f, GetParam(), 4);
    const std::vector<float> x0 = RandomVector(gen, 3 * head_dim);
    std::vector<float> x = x0;
    rope.Apply(x.data(), 1, 3, 0);
    EXPECT_EQ(x, x0) << "head_dim " << head_dim;
  }
}

TEST_P(rope_layouts, PreservesNorms) {
  const RopeLayout layout = GetParam();
  std::mt19937 gen(4);
  const int head_dim = 16, n_heads = 3;
  const Rope rope(head_dim, 10000.0f, layout, 512);
  for (int pos : {1, 2, 17, 100, 511}) {
    const std::vector<float> x0 = RandomVector(gen, n_heads * head_dim);
    std::vector<float> x = x0;
    rope.Apply(x.data(), 1, n_heads, pos);
    for (int h = 0; h < n_heads; ++h) {
      double before = 0, after = 0;
      for (int i = 0; i < head_dim; ++i) {
        before += double{x0[h * head_dim + i]} * x0[h * head_dim + i];
        after += double{x[h * head_dim + i]} * x[h * head_dim + i];
      }
      EXPECT_NEAR(std::sqrt(after), std::sqrt(before), 1e-5 * std::sqrt(before)) << "pos " << pos;
    }
    // Each rotated pair keeps its own length too.
    const int half = head_dim / 2;
    for (int j = 0; j < half; ++j) {
      const int a = layout == RopeLayout::kInterleaved ? 2 * j : j;
      const int b = layout == RopeLayout::kInterleaved ? 2 * j + 1 : j + half;
      EXPECT_NEAR(std::hypot(x[a], x[b]), std::hypot(x0[a], x0[b]), 1e-5 * std::hypot(x0[a], x0[b]) + 1e-7);
    }
    EXPECT_NE(x, x0) << "position " << pos << " rotated nothing";
  }
}

double Dot(const float* a, const float* b, int n) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += double{a[i]} * b[i];
  return sum;
}

TEST_P(rope_layouts, ScoresDependOnlyOnRelativePosition) {
  std::mt19937 gen(5);
  const int head_dim = 32;
  const Rope rope(head_dim, 10000.0f, GetParam(), 512);
  const std::vector<float> q0 = RandomVector(gen, head_dim), k0 = RandomVector(gen, head_dim);
  const auto score = [&](int q_pos, int k_pos) {
    std::vector<float> q = q0, k = k0;
    rope.Apply(q.data(), 1, 1, q_pos);
    rope.Apply(k.data(), 1, 1, k_pos);
    return Dot(q.data(), k.data(), head_dim);
  };
  // |q·k| <= |q||k|; rounding of the angles at positions up to ~450 moves it by ~1e-3 of that.
  const double scale = std::sqrt(Dot(q0.data(), q0.data(), head_dim) * Dot(k0.data(), k0.data(), head_dim));
  for (int distance : {0, 1, 5, 40}) {
    const double reference = score(distance, 0);
    for (int shift : {1, 7, 100, 400}) {
      EXPECT_NEAR(score(shift + distance, shift), reference, 2e-3 * scale)
          << "distance " << distance << " shift " << shift;
    }
  }
  double largest_change = 0;
  for (int distance : {1, 5, 40, 200}) {
    largest_change = std::max(largest_change, std::fabs(score(distance, 0) - score(0, 0)));
  }
  EXPECT_GT(largest_change, 0.05 * scale) << "the score should change with the distance";
}

// ---------------------------------------------------------------------------------------
// Hugging Face's layout. HF stores each head's Q/K rows permuted (formats.md §4.9):
//   permute(w, n_heads) = w.view(n_heads, d/2, 2, dim).transpose(1, 2).reshape(n_heads·d, dim)
// so within a head HF row j = Meta row 2j and HF row d/2 + j = Meta row 2j + 1. Its
// half-split pairs (j, j + d/2) then hold exactly Meta's interleaved pairs (2j, 2j + 1).

// The HF row index of Meta row `meta_row` within one head.
int HfRowOfMetaRow(int meta_row, int head_dim) {
  return (meta_row % 2) * (head_dim / 2) + meta_row / 2;
}

// permute_hf for a [n_heads·head_dim, dim] matrix, written directly from the view/transpose
// formula: element [h, i, p, c] of the view moves to [h, p, i, c].
std::vector<float> PermuteHf(const std::vector<float>& w, int n_heads, int head_dim, int dim) {
  std::vector<float> out(w.size());
  const int half = head_dim / 2;
  for (int h = 0; h < n_heads; ++h) {
    for (int i = 0; i < half; ++i) {
      for (int p = 0; p < 2; ++p) {
        const size_t from = static_cast<size_t>(h) * head_dim + i * 2 + p;  // view [h, i, p]
        const size_t to = static_cast<size_t>(h) * head_dim + p * half + i;  // transposed [h, p, i]
        for (int c = 0; c < dim; ++c) out[to * dim + c] = w[from * dim + c];
      }
    }
  }
  return out;
}

// y = W x for W [rows, cols].
std::vector<float> Project(const std::vector<float>& w, int rows, int cols, const std::vector<float>& x) {
  std::vector<float> y(rows);
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (int c = 0; c < cols; ++c) sum += double{w[static_cast<size_t>(r) * cols + c]} * x[c];
    y[r] = static_cast<float>(sum);
  }
  return y;
}

TEST(rope_hf, PermutationMatchesTheDocumentedRowMapping) {
  const int n_heads = 2, head_dim = 8, dim = 1;
  std::vector<float> w(n_heads * head_dim);
  for (size_t r = 0; r < w.size(); ++r) w[r] = static_cast<float>(r);  // row r holds r
  const std::vector<float> hf = PermuteHf(w, n_heads, head_dim, dim);
  // Head 0: Meta rows 0, 2, 4, 6 then 1, 3, 5, 7; head 1 likewise offset by 8.
  EXPECT_EQ(hf, (std::vector<float>{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}));
  for (int r = 0; r < head_dim; ++r) EXPECT_EQ(hf[HfRowOfMetaRow(r, head_dim)], w[r]);
}

struct AttentionShape {
  int dim;
  int n_heads;
  int n_kv_heads;
  int head_dim;
};

class rope_hf_relation : public ::testing::TestWithParam<AttentionShape> {};

INSTANTIATE_TEST_SUITE_P(Shapes, rope_hf_relation,
                         ::testing::Values(AttentionShape{64, 8, 4, 8},     // stories260K: GQA
                                           AttentionShape{48, 4, 4, 12},    // multi-head
                                           AttentionShape{40, 4, 1, 10},    // multi-query
                                           AttentionShape{32, 2, 2, 16}),
                         [](const auto& info) {
                           const AttentionShape& s = info.param;
                           return "heads" + std::to_string(s.n_heads) + "_kv" + std::to_string(s.n_kv_heads) +
                                  "_d" + std::to_string(s.head_dim);
                         });

// For random W_Q, W_K and inputs, interleaved RoPE on (W x) and half-split RoPE on
// (permute_hf(W) x) give the same rotated vectors up to the per-head row permutation, and
// so the same per-head scores q·k, at every pair of positions.
TEST_P(rope_hf_relation, InterleavedOnMetaEqualsHalfSplitOnHf) {
  const AttentionShape s = GetParam();
  std::mt19937 gen(6);
  const int q_dim = s.n_heads * s.head_dim, kv_dim = s.n_kv_heads * s.head_dim;
  const int group = s.n_heads / s.n_kv_heads;
  const std::vector<float> wq = RandomVector(gen, static_cast<size_t>(q_dim) * s.dim);
  const std::vector<float> wk = RandomVector(gen, static_cast<size_t>(kv_dim) * s.dim);
  const std::vector<float> wq_hf = PermuteHf(wq, s.n_heads, s.head_dim, s.dim);
  const std::vector<float> wk_hf = PermuteHf(wk, s.n_kv_heads, s.head_dim, s.dim);  // K: n_kv_heads
  const Rope interleaved(s.head_dim, 10000.0f, RopeLayout::kInterleaved, 512);
  const Rope half_split(s.head_dim, 10000.0f, RopeLayout::kHalfSplit, 512);

  const std::pair<int, int> positions[] = {{0, 0}, {1, 0}, {3, 3}, {7, 2}, {100, 37}, {511, 0}, {511, 510}};
  double largest_mismatch = 0;
  for (auto [q_pos, k_pos] : positions) {
    SCOPED_TRACE(::testing::Message() << "q at " << q_pos << ", k at " << k_pos);
    const std::vector<float> x_q = RandomVector(gen, s.dim), x_k = RandomVector(gen, s.dim);
    std::vector<float> q_meta = Project(wq, q_dim, s.dim, x_q);
    std::vector<float> k_meta = Project(wk, kv_dim, s.dim, x_k);
    std::vector<float> q_hf = Project(wq_hf, q_dim, s.dim, x_q);
    std::vector<float> k_hf = Project(wk_hf, kv_dim, s.dim, x_k);
    // The wrong combination: HF weights with interleaved RoPE.
    std::vector<float> q_wrong = q_hf, k_wrong = k_hf;
    interleaved.Apply(q_meta.data(), 1, s.n_heads, q_pos);
    interleaved.Apply(k_meta.data(), 1, s.n_kv_heads, k_pos);
    half_split.Apply(q_hf.data(), 1, s.n_heads, q_pos);
    half_split.Apply(k_hf.data(), 1, s.n_kv_heads, k_pos);
    interleaved.Apply(q_wrong.data(), 1, s.n_heads, q_pos);
    interleaved.Apply(k_wrong.data(), 1, s.n_kv_heads, k_pos);

    // Coordinate by coordinate, up to the permutation.
    for (int h = 0; h < s.n_heads; ++h) {
      for (int r = 0; r < s.head_dim; ++r) {
        ASSERT_NEAR(q_hf[h * s.head_dim + HfRowOfMetaRow(r, s.head_dim)], q_meta[h * s.head_dim + r], 1e-4)
            << "q head " << h << " meta row " << r;
      }
    }
    for (int h = 0; h < s.n_kv_heads; ++h) {
      for (int r = 0; r < s.head_dim; ++r) {
        ASSERT_NEAR(k_hf[h * s.head_dim + HfRowOfMetaRow(r, s.head_dim)], k_meta[h * s.head_dim + r], 1e-4)
            << "k head " << h << " meta row " << r;
      }
    }
    // Per-head scores, each query head against its key/value head.
    for (int h = 0; h < s.n_heads; ++h) {
      const int kv = h / group;
      const double meta = Dot(&q_meta[h * s.head_dim], &k_meta[kv * s.head_dim], s.head_dim);
      const double hf = Dot(&q_hf[h * s.head_dim], &k_hf[kv * s.head_dim], s.head_dim);
      const double wrong = Dot(&q_wrong[h * s.head_dim], &k_wrong[kv * s.head_dim], s.head_dim);
      EXPECT_NEAR(hf, meta, 1e-3 * (1 + std::fabs(meta))) << "head " << h;
      largest_mismatch = std::max(largest_mismatch, std::fabs(wrong - meta));
    }
  }
  // HF weights with interleaved RoPE are wrong: some score must differ clearly, or the
  // relation above would hold for any pairing and test nothing.
  EXPECT_GT(largest_mismatch, 1.0);
}

}  // namespace
}  // namespace toyllm
