// AVX-512 GEMV: 16 floats per register, four accumulators per row (64 weights in flight,
// enough to cover the FMA latency), and a masked load for a row's ragged tail.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "runtime/kernels/gemv.h"
#include "runtime/kernels/gemv_kquant_avx512.h"
#include "runtime/kernels/gemv_legacy_avx512.h"
#include "runtime/kernels/prefetch.h"
#include "runtime/kernels/row_streams.h"

#include "runtime/kernels/target_avx512_begin.h"

#include "runtime/kernels/gemv_rows.h"  // after the target: its loops use the same target

namespace toyllm {
namespace {

// Loaders: 16 weights of a row from element i on, as floats (masked: the first lanes only).
// Load64 reads a whole step of 64 weights, a 512-bit load per cache line or half line:
// with 256-bit loads of f16 rows, decode from memory ran at 21–26 GB/s when x sat at some
// offsets from a cache line and at 31 at others (Zen 4); whole-register loads run at 31
// wherever x sits.
struct F32 {
  static constexpr int kBytes = 4;
  static constexpr bool kAlignRow = true;
  static __m512 Load(const void* row, int i) {
    return _mm512_loadu_ps(static_cast<const float*>(row) + i);
  }
  static __m512 Load(const void* row, int i, __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, static_cast<const float*>(row) + i);
  }
  static void Load64(const void* row, int i, __m512 w[4]) {
    for (int j = 0; j < 4; ++j) w[j] = Load(row, i + 16 * j);
  }
};

__m512 HalvesToFloats(__m256i bits) { return _mm512_cvtph_ps(bits); }

// bf16 is the top half of a float32: widen to 32 bits and shift into place.
__m512 Bf16sToFloats(__m256i bits) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

// 16-bit weights: 16 at a time as bits, made floats by kWiden.
template <__m512 (*kWiden)(__m256i)>
struct Bits16 {
  static constexpr int kBytes = 2;
  static constexpr bool kAlignRow = false;  // 32-byte loads: GGUF's alignment suffices
  static __m512 Load(const void* row, int i) {
    return kWiden(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(row) + i)));
  }
  static __m512 Load(const void* row, int i, __mmask16 m) {
    return kWiden(_mm256_maskz_loadu_epi16(m, static_cast<const uint16_t*>(row) + i));
  }
  static void Load64(const void* row, int i, __m512 w[4]) {
    for (int j = 0; j < 2; ++j) {
      const __m512i bits = _mm512_loadu_si512(static_cast<const uint16_t*>(row) + i + 32 * j);
      w[2 * j] = kWiden(_mm512_castsi512_si256(bits));
      w[2 * j + 1] = kWiden(_mm512_extracti64x4_epi64(bits, 1));
    }
  }
};

using F16 = Bits16<HalvesToFloats>;
using BF16 = Bits16<Bf16sToFloats>;

// How far ahead of the step being read its row is prefetched (runtime/kernels/prefetch.h):
// f16 rows of 8192 read 21.5 GB/s from memory where bench's probe reads 28, and 24–27 with
// the next 2 KiB asked for (Zen 5; llama3.2-1b f16 decode 6.9 → 7.5 tok/s in one window);
// 4 KiB gained less there, and ~4 % more on an Intel Xeon (Emerald Rapids), within its noise.
constexpr int kPrefetchAhead = 2048;

// The rows' dot products with x, kRows rows in step (runtime/kernels/row_streams.h).
template <class T, int kRows>
void DotRows(const RowsInStep& rows, const float* x, int n) {
  const auto row = [&](int r) { return rows.data + r * rows.bytes_apart; };
  __m512 a[kRows][4];
  for (int r = 0; r < kRows; ++r) a[r][0] = a[r][1] = a[r][2] = a[r][3] = _mm512_setzero_ps();
  int i = 0;
  if (T::kAlignRow) {
    // A 64-byte load that straddles two cache lines costs two; GGUF aligns tensors to 32
    // bytes only, which made every float32 load straddle (19 GB/s instead of 29 on 768
    // columns). A masked head brings the row's loads onto line boundaries; rows in step,
    // a multiple of 64 bytes apart (RowsInStreams), share it.
    const int head = static_cast<int>((64 - reinterpret_cast<uintptr_t>(row(0)) % 64) % 64 / 4);
    i = head < n ? head : n;
    if (i > 0) {
      const __mmask16 m = static_cast<__mmask16>((1u << i) - 1);
      for (int r = 0; r < kRows; ++r) a[r][1] = _mm512_fmadd_ps(T::Load(row(r), 0, m), _mm512_maskz_loadu_ps(m, x), a[r][1]);
    }
  }
  for (; i + 64 <= n; i += 64) {
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      PrefetchAhead(row(r) + int64_t{i} * T::kBytes, 64 * T::kBytes, kPrefetchAhead);
      __m512 w[4];
      T::Load64(row(r), i, w);
      for (int j = 0; j < 4; ++j) a[r][j] = _mm512_fmadd_ps(w[j], _mm512_loadu_ps(x + i + 16 * j), a[r][j]);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    int tail = i;
    for (; tail + 16 <= n; tail += 16) {
      a[r][0] = _mm512_fmadd_ps(T::Load(row(r), tail), _mm512_loadu_ps(x + tail), a[r][0]);
    }
    if (tail < n) {
      const __mmask16 m = static_cast<__mmask16>((1u << (n - tail)) - 1);
      a[r][1] = _mm512_fmadd_ps(T::Load(row(r), tail, m), _mm512_maskz_loadu_ps(m, x + tail), a[r][1]);
    }
    const __m512 sum = _mm512_add_ps(_mm512_add_ps(a[r][0], a[r][1]), _mm512_add_ps(a[r][2], a[r][3]));
    rows.y[r * rows.step] = _mm512_reduce_add_ps(sum);
  }
}

// Rows in four streams (row_streams.h): f16 rows from memory 13.1 → 15.5 GB/s and
// llama3.2-1b f16 decode 4.95 → 5.8–6.0 tok/s on one Xeon (Emerald Rapids) core; float32
// rows of 768 from memory 17–24 → 25–37 GB/s on one Zen 5 core (a noisy host). Float32 rows whose starts
// do not share a line offset (a row not a multiple of 64 bytes) each keep their own head:
// the four streams then go a whole row of each in turn.
template <class T>
void RowsInStreams(const Matrix& w, const float* x, int row_begin, int row_end, float* y) {
  if (T::kAlignRow && w.row_stride() % 64 != 0) {
    gemv_rows::WholeRowsInStreams(w, row_begin, row_end, y, [&](const uint8_t* row) {
      float dot;
      DotRows<T, 1>(RowsInStep{row, 0, &dot, 1}, x, w.cols);
      return dot;
    });
    return;
  }
  InStreams<4>(w, row_begin, row_end, y, [&](auto streams, const RowsInStep& rows) {
    DotRows<T, decltype(streams)::value>(rows, x, w.cols);
  });
}

// What gemv_rows.h needs of this instruction set.
struct Avx512 {
  // vpdpbusd multiplies unsigned bytes by signed ones: |w| times x with w's sign moved onto
  // it is the same product.
  static __m256i Dot32(__m256i qw, __m256i qx) {
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_sign_epi8(qw, qw),
                               _mm256_sign_epi8(qx, qw));
  }
};

}  // namespace

void GemvAvx512(const Matrix& w, const GemvInput& x, int row_begin, int row_end, float* y) {
  switch (w.type) {  // the types that have 512-bit kernels of their own
    case WeightType::kQ4_0:
    case WeightType::kQ4_1:
    case WeightType::kQ5_0:
    case WeightType::kQ5_1:
    case WeightType::kIQ4_NL:
    case WeightType::kQ8_0: return RowsLegacyAvx512(w, x.blocks, row_begin, row_end, y);
    case WeightType::kQ4_K: return RowsQ4_KAvx512(w, x.k_blocks, row_begin, row_end, y);
    case WeightType::kQ5_K: return RowsQ5_KAvx512(w, x.k_blocks, row_begin, row_end, y);
    case WeightType::kQ6_K: return RowsQ6_KAvx512(w, x.k_blocks, row_begin, row_end, y);
    case WeightType::kF32: return RowsInStreams<F32>(w, x.values, row_begin, row_end, y);
    case WeightType::kF16: return RowsInStreams<F16>(w, x.values, row_begin, row_end, y);
    case WeightType::kBF16: return RowsInStreams<BF16>(w, x.values, row_begin, row_end, y);
    default: break;
  }
  gemv_rows::Gemv<Avx512>(w, x, row_begin, row_end, y);
}

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
