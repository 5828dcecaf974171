// AVX2 GEMV (with FMA and F16C): 8 floats per register, float rows four at a time in step,
// and a scalar loop for a row's ragged tail.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "runtime/kernels/gemv.h"
#include "runtime/kernels/gemv_kquant_avx2.h"
#include "runtime/weight_convert.h"

#include "runtime/kernels/target_avx2_begin.h"

#include "runtime/kernels/gemv_rows.h"  // after the target: its loops use the same target

namespace toyllm {
namespace {

uint16_t Bits16(const void* row, int i) {
  uint16_t h;
  std::memcpy(&h, static_cast<const uint16_t*>(row) + i, sizeof(h));
  return h;
}

// Loaders: 8 weights of a row from element i on as floats, or the one weight at i, and
// whether to prefetch the row (runtime/kernels/prefetch.h). f32 rows are not prefetched:
// with only an FMA per 32 bytes the processor's own prefetcher keeps up, and on an AMD Zen 3
// asking for the lines 4 KiB ahead as well made 110M f32 decode on one thread 20 % slower
// (29–32 tokens/s against 36–38), and on a Zen 5 with rows in step 0–12 % slower.
struct F32 {
  static constexpr int kBytes = 4;
  static constexpr bool kPrefetch = false;
  static __m256 Load(const void* row, int i) {
    return _mm256_loadu_ps(static_cast<const float*>(row) + i);
  }
  static float At(const void* row, int i) { return static_cast<const float*>(row)[i]; }
};

struct F16 {
  static constexpr int kBytes = 2;
  static constexpr bool kPrefetch = true;
  static __m256 Load(const void* row, int i) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i)));
  }
  static float At(const void* row, int i) { return HalfToFloat(Bits16(row, i)); }
};

// bf16 is the top half of a float32: widen to 32 bits and shift into place.
struct BF16 {
  static constexpr int kBytes = 2;
  static constexpr bool kPrefetch = true;
  static __m256 Load(const void* row, int i) {
    const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
  }
  static float At(const void* row, int i) { return Bf16ToFloat(Bits16(row, i)); }
};

struct Avx2;  // below: the instruction set's name for gemv_rows.h

// The rows' dot products with x, kRows rows in step (runtime/kernels/row_streams.h): each
// 16 of x loaded once for all of them, and two accumulators per row, so that four rows keep
// eight FMAs in flight.
template <class T, int kRows>
void DotRows(const RowsInStep& rows, const float* x, int n) {
  const auto row = [&](int r) { return rows.data + r * rows.bytes_apart; };
  __m256 a[kRows][2];
  for (int r = 0; r < kRows; ++r) a[r][0] = a[r][1] = _mm256_setzero_ps();
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 x0 = _mm256_loadu_ps(x + i), x1 = _mm256_loadu_ps(x + i + 8);
    for (int r = 0; r < kRows; ++r) {
      if (T::kPrefetch && i % 32 == 0) PrefetchAhead(row(r) + int64_t{i} * T::kBytes, 32 * T::kBytes, gemv_rows::kPrefetchAhead);
      a[r][0] = _mm256_fmadd_ps(T::Load(row(r), i), x0, a[r][0]);
      a[r][1] = _mm256_fmadd_ps(T::Load(row(r), i + 8), x1, a[r][1]);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    int tail = i;
    if (tail + 8 <= n) {
      a[r][0] = _mm256_fmadd_ps(T::Load(row(r), tail), _mm256_loadu_ps(x + tail), a[r][0]);
      tail += 8;
    }
    float rest = 0.0f;
    for (; tail < n; ++tail) rest += T::At(row(r), tail) * x[tail];
    rows.y[r * rows.step] = gemv_rows::Sum8<Avx2>(_mm256_add_ps(a[r][0], a[r][1])) + rest;
  }
}

// Rows in four streams, read in step (row_streams.h). One whole row after another, as the
// block types go, kept too few lines in flight: on a Zen 5 core running this path, 110M f32
// decode went 37–51 → 78–85 tokens/s, 15M f32 259–581 → 724–763, llama3.2-1b f16 8.8 → 10–11.
template <class T>
void RowsInStreams(const Matrix& w, const float* x, int row_begin, int row_end, float* y) {
  InStreams<4>(w, row_begin, row_end, y, [&](auto streams, const RowsInStep& rows) {
    DotRows<T, decltype(streams)::value>(rows, x, w.cols);
  });
}

// What gemv_rows.h needs of this instruction set.
struct Avx2 {
  // maddubs multiplies unsigned bytes by signed ones, adding pairs into int16 (at most
  // 2·128·127, no saturation): |w| times x with w's sign moved onto it; madd then adds
  // pairs of those into int32.
  static __m256i Dot32(__m256i qw, __m256i qx) {
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(qw, qw), _mm256_sign_epi8(qx, qw));
    return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
  }
};

}  // namespace

void GemvAvx2(const Matrix& w, const GemvInput& x, int row_begin, int row_end, float* y) {
  switch (w.type) {
    case WeightType::kF32: return RowsInStreams<F32>(w, x.values, row_begin, row_end, y);
    case WeightType::kF16: return RowsInStreams<F16>(w, x.values, row_begin, row_end, y);
    case WeightType::kBF16: return RowsInStreams<BF16>(w, x.values, row_begin, row_end, y);
    case WeightType::kQ4_K: return RowsQ4_KAvx2(w, x.k_blocks, row_begin, row_end, y);
    case WeightType::kQ5_K: return RowsQ5_KAvx2(w, x.k_blocks, row_begin, row_end, y);
    case WeightType::kQ6_K: return RowsQ6_KAvx2(w, x.k_blocks, row_begin, row_end, y);
    default: return gemv_rows::Gemv<Avx2>(w, x, row_begin, row_end, y);
  }
}

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
