// The bf16 GEMM: a tile of up to 8 weight rows × 32 activation rows kept in 16 registers of
// float32 sums. Each step over a pair of columns loads the two panels' 16 pairs once and
// broadcasts each weight row's pair, so every load feeds eight or sixteen vdpbf16ps.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "runtime/kernels/gemm_bf16.h"

#include "runtime/kernels/target_avx512_bf16_begin.h"

namespace toyllm {
namespace {

constexpr int kTileRows = 8;    // weight rows of a tile
constexpr int kTilePanels = 2;  // activation panels of a tile (16 rows each)

// Floats [0, n) of `in` (n ≤ 32, even) to bf16, pairs (2p, 2p + 1) becoming word p.
__m512i RoundPairs(const float* in, int n) {
  const __mmask16 low = static_cast<__mmask16>((1u << std::min(n, 16)) - 1);
  const __mmask16 high = static_cast<__mmask16>((1u << std::max(n - 16, 0)) - 1);
  return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(high, in + 16), _mm512_maskz_loadu_ps(low, in)));
}

__mmask16 FirstLanes(int n) { return static_cast<__mmask16>((1u << std::clamp(n, 0, 16)) - 1); }

// y[l · ldy + r] = s[r] lane l (+= with `add`) for the first `rows` rows (l < rows ≤ 16)
// and r < columns (≤ 8): sixteen sums of eight weight rows, transposed in registers so
// that each activation row's sums go out as one store of contiguous floats. Scattering
// each register down the column instead cost ~8 % of a 1024-wide product on Zen 5.
void StoreTransposed(const __m512 (&s)[8], int columns, int rows, float* y, int ldy, bool add) {
  // Within each 128-bit lane L: b[e] holds s[0..3] lane 4L + e, b[4 + e] s[4..7]'s.
  __m512 b[8];
  for (int half = 0; half < 2; ++half) {
    const __m512* t = &s[4 * half];
    const __m512 lo01 = _mm512_unpacklo_ps(t[0], t[1]), hi01 = _mm512_unpackhi_ps(t[0], t[1]);
    const __m512 lo23 = _mm512_unpacklo_ps(t[2], t[3]), hi23 = _mm512_unpackhi_ps(t[2], t[3]);
    b[4 * half + 0] = _mm512_shuffle_ps(lo01, lo23, _MM_SHUFFLE(1, 0, 1, 0));
    b[4 * half + 1] = _mm512_shuffle_ps(lo01, lo23, _MM_SHUFFLE(3, 2, 3, 2));
    b[4 * half + 2] = _mm512_shuffle_ps(hi01, hi23, _MM_SHUFFLE(1, 0, 1, 0));
    b[4 * half + 3] = _mm512_shuffle_ps(hi01, hi23, _MM_SHUFFLE(3, 2, 3, 2));
  }
  // Lanes L and L + 1 of b[e] and b[4 + e] side by side: rows 4L + e and 4(L + 1) + e.
  const __m512i lanes01 = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i lanes23 = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  const __mmask8 mask = static_cast<__mmask8>((1u << columns) - 1);
  const auto store = [&](int row, __m256 sums) {
    float* out = y + int64_t{row} * ldy;
    if (add) sums = _mm256_add_ps(_mm256_maskz_loadu_ps(mask, out), sums);
    _mm256_mask_storeu_ps(out, mask, sums);
  };
  for (int e = 0; e < 4; ++e) {
    for (int pair = 0; pair < 2; ++pair) {
      const __m512 two = _mm512_permutex2var_ps(b[e], pair == 0 ? lanes01 : lanes23, b[4 + e]);
      const int first = 8 * pair + e;  // the row of the low half; the high half's is 4 on
      if (first < rows) store(first, _mm512_castps512_ps256(two));
      if (first + 4 < rows) store(first + 4, _mm256_castsi256_ps(_mm512_extracti64x4_epi64(_mm512_castps_si512(two), 1)));
    }
  }
}

template <int kRows, int kPanels>
void Tile(const uint32_t* x, int64_t panel_words, int x_rows, const uint32_t* w, int pairs,
          float* y, int ldy, bool add) {
  __m512 sum[kRows][kPanels];
  for (int r = 0; r < kRows; ++r) {
    for (int j = 0; j < kPanels; ++j) sum[r][j] = _mm512_setzero_ps();
  }
  for (int p = 0; p < pairs; ++p) {
    __m512bh xs[kPanels];
    for (int j = 0; j < kPanels; ++j) {
      xs[j] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(x + j * panel_words + 16 * p));
    }
#pragma GCC unroll 8  // each sum its own register
    for (int r = 0; r < kRows; ++r) {
      const __m512bh ws = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(w[int64_t{r} * pairs + p])));
      for (int j = 0; j < kPanels; ++j) sum[r][j] = _mm512_dpbf16_ps(sum[r][j], xs[j], ws);
    }
  }
  // Lane l of sum[r][j] is y[(16j + l) · ldy + r], for the rows that exist.
  for (int j = 0; j < kPanels; ++j) {
    __m512 s[8];
    for (int r = 0; r < 8; ++r) s[r] = r < kRows ? sum[r][j] : _mm512_setzero_ps();
    StoreTransposed(s, kRows, std::min(16, x_rows - 16 * j), y + int64_t{16} * j * ldy, ldy, add);
  }
}

using TileFn = void (*)(const uint32_t*, int64_t, int, const uint32_t*, int, float*, int, bool);

template <int kPanels, int... kRows>
constexpr std::array<TileFn, sizeof...(kRows)> TilesOf(std::integer_sequence<int, kRows...>) {
  return {Tile<kRows + 1, kPanels>...};
}

// kTiles[panels - 1][rows - 1]: the ragged edges get tiles of their own size.
constexpr std::array<TileFn, kTileRows> kTiles[kTilePanels] = {
    TilesOf<1>(std::make_integer_sequence<int, kTileRows>()),
    TilesOf<2>(std::make_integer_sequence<int, kTileRows>())};

}  // namespace

void PackBf16Panels(const float* x, int rows, int cols, Bf16Panels* out) {
  const int pairs = cols / 2, panels = (rows + 15) / 16;
  out->rows = rows;
  out->cols = cols;
  out->words.resize(static_cast<size_t>(panels) * pairs * 16);
  // A panel's 16 rows × 16 pairs at a time, each row's pairs one register, transposed so
  // that the 16 rows' pair p are one store to words 16p, 16p + 1, ... Scattering each
  // row's pairs instead took 2.3 % of llama3.2-1b q4_k_m's prefill on Zen 5; this, 0.7 %.
  for (int panel = 0; panel < panels; ++panel) {
    uint32_t* words = &out->words[static_cast<size_t>(panel) * pairs * 16];
    for (int p = 0; p < pairs; p += 16) {
      const int n = std::min(16, pairs - p);
      __m512i row[16];
      for (int r = 0; r < 16; ++r) {
        const int i = 16 * panel + r;
        row[r] = i < rows ? RoundPairs(x + int64_t{i} * cols + 2 * p, 2 * n) : _mm512_setzero_si512();
      }
      // Within each 128-bit lane L: u[4g + e] holds pair 4L + e of rows 4g .. 4g + 3.
      __m512i u[16];
      for (int g = 0; g < 4; ++g) {
        const __m512i* q = &row[4 * g];
        const __m512i lo01 = _mm512_unpacklo_epi32(q[0], q[1]), hi01 = _mm512_unpackhi_epi32(q[0], q[1]);
        const __m512i lo23 = _mm512_unpacklo_epi32(q[2], q[3]), hi23 = _mm512_unpackhi_epi32(q[2], q[3]);
        u[4 * g + 0] = _mm512_unpacklo_epi64(lo01, lo23);
        u[4 * g + 1] = _mm512_unpackhi_epi64(lo01, lo23);
        u[4 * g + 2] = _mm512_unpacklo_epi64(hi01, hi23);
        u[4 * g + 3] = _mm512_unpackhi_epi64(hi01, hi23);
      }
      // Lane L of u[e], u[4 + e], u[8 + e], u[12 + e] side by side: pair 4L + e of all 16.
      for (int e = 0; e < 4; ++e) {
        const __m512i low01 = _mm512_shuffle_i32x4(u[e], u[4 + e], _MM_SHUFFLE(1, 0, 1, 0));
        const __m512i high01 = _mm512_shuffle_i32x4(u[e], u[4 + e], _MM_SHUFFLE(3, 2, 3, 2));
        const __m512i low23 = _mm512_shuffle_i32x4(u[8 + e], u[12 + e], _MM_SHUFFLE(1, 0, 1, 0));
        const __m512i high23 = _mm512_shuffle_i32x4(u[8 + e], u[12 + e], _MM_SHUFFLE(3, 2, 3, 2));
        const __m512i pair[4] = {_mm512_shuffle_i32x4(low01, low23, _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm512_shuffle_i32x4(low01, low23, _MM_SHUFFLE(3, 1, 3, 1)),
                                 _mm512_shuffle_i32x4(high01, high23, _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm512_shuffle_i32x4(high01, high23, _MM_SHUFFLE(3, 1, 3, 1))};
        for (int lane = 0; lane < 4; ++lane) {
          const int k = 4 * lane + e;  // the pair, from p
          if (k < n) _mm512_storeu_si512(words + 16 * (p + k), pair[lane]);
        }
      }
    }
  }
}

void RoundToBf16Pairs(const float* in, int64_t n, uint32_t* out) {
  for (int64_t p = 0; p < n / 2; p += 16) {
    const int count = static_cast<int>(std::min<int64_t>(16, n / 2 - p));
    _mm512_mask_storeu_epi32(out + p, FirstLanes(count), RoundPairs(in + 2 * p, 2 * count));
  }
}

void GemmBf16(const Bf16Panels& x, const uint32_t* w, int rows, float* y, int ldy, bool add) {
  const int pairs = x.cols / 2, panels = (x.rows + 15) / 16;
  const int64_t panel_words = int64_t{pairs} * 16;
  for (int r = 0; r < rows; r += kTileRows) {
    const int tile_rows = std::min(kTileRows, rows - r);
    for (int j = 0; j < panels; j += kTilePanels) {
      const int tile_panels = std::min(kTilePanels, panels - j);
      kTiles[tile_panels - 1][tile_rows - 1](&x.words[j * panel_words], panel_words, x.rows - 16 * j,
                                             w + int64_t{r} * pairs, pairs, y + int64_t{16} * j * ldy + r, ldy, add);
    }
  }
}

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
