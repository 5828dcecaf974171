#include <immintrin.h>

#include <cstdint>

#include "runtime/kernels/few_rows.h"

#include "runtime/kernels/target_avx512_begin.h"

#include "runtime/kernels/few_rows_simd.h"  // after the target: its loops use the same target

namespace toyllm {
namespace {

struct Avx512 {
  using Vec = __m512;
  static constexpr int kLanes = 16;
  static constexpr int kMaxVecs = 4;  // 4 × 4 accumulators, 4 row registers: within 32
  static constexpr int kMaxDotRows = 4;  // 4 × 4 accumulators, 4 key registers
  static constexpr bool kPrefetchValues = true;  // see Sums
  static Vec Zero() { return _mm512_setzero_ps(); }
  static Vec Set1(float v) { return _mm512_set1_ps(v); }
  static Vec Load(const float* p) { return _mm512_loadu_ps(p); }
  static Vec LoadF16(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static void Store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec Fma(Vec a, Vec b, Vec acc) { return _mm512_fmadd_ps(a, b, acc); }
  // The two 256-bit halves added (extractf64x4: F alone, where extractf32x8 needs DQ).
  static __m256 Half(Vec v) {
    return _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  }
  static __m128 Sum4(Vec a, Vec b, Vec c, Vec d) {
    // Halve each to 256 bits, then as AVX2 does: two hadds leave four sums per 128 bits.
    const __m256 s = _mm256_hadd_ps(_mm256_hadd_ps(Half(a), Half(b)), _mm256_hadd_ps(Half(c), Half(d)));
    return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  }
  static float Sum(Vec v) { return _mm512_reduce_add_ps(v); }
};

}  // namespace

const FewRowsKernels kFewRowsAvx512 = few_rows::Kernels<Avx512>();

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
