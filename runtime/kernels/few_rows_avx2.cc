#include <immintrin.h>

#include <cstdint>

#include "runtime/kernels/few_rows.h"

#include "runtime/kernels/target_avx2_begin.h"

#include "runtime/kernels/few_rows_simd.h"  // after the target: its loops use the same target

namespace toyllm {
namespace {

struct Avx2 {
  using Vec = __m256;
  static constexpr int kLanes = 8;
  static constexpr int kMaxVecs = 2;  // 4 × 2 accumulators, 2 row registers: within 16
  static constexpr int kMaxDotRows = 2;  // 2 × 4 accumulators, 4 key registers
  // Sums makes one pass over the values per 2 registers of a row, a cache line of f32 at
  // a time: prefetching each line costs more than it brings (110M q8_0 at depth 4096 on
  // Zen 5 with TOYLLM_CPU=avx2: 25.5–27 tokens/s without, 23.8–24.5 with).
  static constexpr bool kPrefetchValues = false;
  static Vec Zero() { return _mm256_setzero_ps(); }
  static Vec Set1(float v) { return _mm256_set1_ps(v); }
  static Vec Load(const float* p) { return _mm256_loadu_ps(p); }
  static Vec LoadF16(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static void Store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec Fma(Vec a, Vec b, Vec acc) { return _mm256_fmadd_ps(a, b, acc); }
  static __m128 Sum4(Vec a, Vec b, Vec c, Vec d) {
    // hadd pairs neighbouring lanes: after two, each 128-bit half holds four partial sums.
    const __m256 s = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
    return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  }
  static float Sum(Vec v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
};

}  // namespace

const FewRowsKernels kFewRowsAvx2 = few_rows::Kernels<Avx2>();

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
