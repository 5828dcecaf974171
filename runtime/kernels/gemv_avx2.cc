// AVX2 GEMV (with FMA and F16C): 8 floats per register, four accumulators per row, and a
// scalar loop for a row's ragged tail.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "runtime/kernels/gemv.h"
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
// (29–32 tokens/s against 36–38).
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

template <class T>
float Dot(const void* row, const float* x, int n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int i = 0;
  for (; i + 32 <= n; i += 32) {
    if (T::kPrefetch) PrefetchAhead(static_cast<const char*>(row) + i * T::kBytes, 32 * T::kBytes, gemv_rows::kPrefetchAhead);
    a0 = _mm256_fmadd_ps(T::Load(row, i), _mm256_loadu_ps(x + i), a0);
    a1 = _mm256_fmadd_ps(T::Load(row, i + 8), _mm256_loadu_ps(x + i + 8), a1);
    a2 = _mm256_fmadd_ps(T::Load(row, i + 16), _mm256_loadu_ps(x + i + 16), a2);
    a3 = _mm256_fmadd_ps(T::Load(row, i + 24), _mm256_loadu_ps(x + i + 24), a3);
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(T::Load(row, i), _mm256_loadu_ps(x + i), a0);
  float tail = 0.0f;
  for (; i < n; ++i) tail += T::At(row, i) * x[i];
  return gemv_rows::Sum8<Avx2>(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3))) + tail;
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
  static constexpr gemv_rows::DotFn kF32 = Dot<F32>, kF16 = Dot<F16>, kBF16 = Dot<BF16>;
};

}  // namespace

void GemvAvx2(const Matrix& w, const GemvInput& x, int row_begin, int row_end, float* y) {
  gemv_rows::Gemv<Avx2>(w, x, row_begin, row_end, y);
}

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
