#include <immintrin.h>

#include "runtime/kernels/swiglu.h"

#include "runtime/kernels/target_avx2_begin.h"

#include "runtime/kernels/exp_avx2.h"

namespace toyllm {
namespace {

__m256 SiluTimes(__m256 g, __m256 up) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 e = ExpNonPositive(_mm256_or_ps(g, sign));  // exp(−|g|) ≤ 1
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 numerator = _mm256_blendv_ps(one, e, g);   // g's sign bit picks e
  const __m256 sigmoid = _mm256_div_ps(numerator, _mm256_add_ps(one, e));
  return _mm256_mul_ps(_mm256_mul_ps(g, sigmoid), up);
}

}  // namespace

void SwiGluAvx2(float* gate, const float* up, int n) {
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(gate + i, SiluTimes(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  }
  if (i < n) {  // the tail through masked loads and stores: nothing past n is touched
    const __m256i lanes = _mm256_cmpgt_epi32(_mm256_set1_epi32(n - i), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 g = _mm256_maskload_ps(gate + i, lanes), u = _mm256_maskload_ps(up + i, lanes);
    _mm256_maskstore_ps(gate + i, lanes, SiluTimes(g, u));
  }
}

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
