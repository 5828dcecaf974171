#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "runtime/kernels/softmax.h"

#include "runtime/kernels/target_avx2_begin.h"

namespace toyllm {
namespace {

// exp(x) for x ≤ 0 (x − max). x = n·ln2 + r with |r| ≤ ln2/2; exp(r) by Cephes' expf
// polynomial; 2ⁿ built in the exponent bits. Below −87.3, 2ⁿ would leave the normal
// range: those lanes are 0, as float weights that small are. NaN stays NaN.
__m256 Exp(__m256 x) {
  const __m256 kLowest = _mm256_set1_ps(-87.3365f);
  const __m256 clamped = _mm256_max_ps(kLowest, x);  // a NaN x passes through
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(clamped, _mm256_set1_ps(1.44269504f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // r = x − n·ln2, ln2 in two parts so that n·0.693359375 is exact.
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), clamped);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i n_int = _mm256_cvtps_epi32(n);
  const __m256 two_n = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n_int, _mm256_set1_epi32(127)), 23));
  return _mm256_andnot_ps(_mm256_cmp_ps(x, kLowest, _CMP_LT_OQ), _mm256_mul_ps(p, two_n));
}

float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

float HorizontalMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

}  // namespace

void SoftmaxAvx2(float* x, int n) {
  // The tail of n % 8 goes through a padded copy; its padding of −∞ gets weight 0.
  constexpr float kPad = -std::numeric_limits<float>::infinity();
  const int whole = n / 8 * 8, tail = n - whole;
  alignas(32) float last[8];
  std::fill(last, last + 8, kPad);
  std::copy(x + whole, x + n, last);

  __m256 max8 = _mm256_load_ps(last);
  for (int i = 0; i < whole; i += 8) max8 = _mm256_max_ps(_mm256_loadu_ps(x + i), max8);
  // max_ps skips a NaN, but exp(NaN − max) is NaN and so is the sum: all NaN, as in scalar.
  const __m256 shift = _mm256_set1_ps(HorizontalMax(max8));

  __m256 sum8 = _mm256_setzero_ps();
  const auto exp_into = [&](float* p) {
    const __m256 e = Exp(_mm256_sub_ps(_mm256_loadu_ps(p), shift));
    _mm256_storeu_ps(p, e);
    sum8 = _mm256_add_ps(sum8, e);
  };
  for (int i = 0; i < whole; i += 8) exp_into(x + i);
  if (tail > 0) exp_into(last);
  const __m256 inv = _mm256_set1_ps(1.0f / HorizontalSum(sum8));
  for (int i = 0; i < whole; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
  for (int i = whole; i < n; ++i) x[i] = last[i - whole] * _mm_cvtss_f32(_mm256_castps256_ps128(inv));
}

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
