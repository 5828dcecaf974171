// exp over eight lanes, for the kernels whose inputs are never positive: softmax's x − max
// and silu's −|g|. Included by a kernel file after target_avx2_begin.h, which makes its
// intrinsics legal there.
#ifndef TOYLLM_RUNTIME_KERNELS_EXP_AVX2_H_
#define TOYLLM_RUNTIME_KERNELS_EXP_AVX2_H_

#include <immintrin.h>

namespace toyllm {

// exp(x) for x ≤ 0, within two ulp of expf. x = n·ln2 + r with |r| ≤ ln2/2; exp(r) by
// Cephes' expf polynomial; 2ⁿ built in the exponent bits. Below −87.3, 2ⁿ would leave the
// normal range: those lanes are 0, as float weights that small are. NaN stays NaN.
inline __m256 ExpNonPositive(__m256 x) {
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

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_EXP_AVX2_H_
