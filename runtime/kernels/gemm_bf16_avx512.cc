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

// Lane l holds l · stride: the offsets of a scatter down a column.
__m512i Strided(int stride) {
  return _mm512_mullo_epi32(_mm512_set1_epi32(stride), _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

template <int kRows, int kPanels>
void Tile(const uint32_t* x, int64_t panel_words, int x_rows, const uint32_t* w, int pairs,
          float* y, int ldy) {
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
  // Lane l of sum[r][j] is y[(16j + l) · ldy + r]: a scatter down the column, masked to the
  // rows that exist.
  const __m512i down = Strided(ldy);
  for (int j = 0; j < kPanels; ++j) {
    const __mmask16 mask = FirstLanes(x_rows - 16 * j);
    for (int r = 0; r < kRows; ++r) {
      _mm512_mask_i32scatter_ps(y + int64_t{16} * j * ldy + r, mask, down, sum[r][j], 4);
    }
  }
}

using TileFn = void (*)(const uint32_t*, int64_t, int, const uint32_t*, int, float*, int);

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
  // Row i's pairs from 2p on go to words 16p + i % 16, 16(p + 1) + i % 16, ... of its panel.
  const __m512i down = Strided(16);
  for (int i = 0; i < panels * 16; ++i) {
    uint32_t* panel = &out->words[static_cast<size_t>(i / 16) * pairs * 16 + i % 16];
    for (int p = 0; p < pairs; p += 16) {
      const int n = std::min(16, pairs - p);
      const __m512i words = i < rows ? RoundPairs(x + int64_t{i} * cols + 2 * p, 2 * n) : _mm512_setzero_si512();
      _mm512_mask_i32scatter_epi32(panel + 16 * p, FirstLanes(n), down, words, 4);
    }
  }
}

void RoundToBf16Pairs(const float* in, int64_t n, uint32_t* out) {
  for (int64_t p = 0; p < n / 2; p += 16) {
    const int count = static_cast<int>(std::min<int64_t>(16, n / 2 - p));
    _mm512_mask_storeu_epi32(out + p, FirstLanes(count), RoundPairs(in + 2 * p, 2 * count));
  }
}

void GemmBf16(const Bf16Panels& x, const uint32_t* w, int rows, float* y, int ldy) {
  const int pairs = x.cols / 2, panels = (x.rows + 15) / 16;
  const int64_t panel_words = int64_t{pairs} * 16;
  for (int r = 0; r < rows; r += kTileRows) {
    const int tile_rows = std::min(kTileRows, rows - r);
    for (int j = 0; j < panels; j += kTilePanels) {
      const int tile_panels = std::min(kTilePanels, panels - j);
      kTiles[tile_panels - 1][tile_rows - 1](&x.words[j * panel_words], panel_words, x.rows - 16 * j,
                                             w + int64_t{r} * pairs, pairs, y + int64_t{16} * j * ldy + r, ldy);
    }
  }
}

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
