#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "runtime/kernels/softmax.h"

#include "runtime/kernels/target_avx2_begin.h"

#include "runtime/kernels/exp_avx2.h"

namespace toyllm {
namespace {

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
    const __m256 e = ExpNonPositive(_mm256_sub_ps(_mm256_loadu_ps(p), shift));
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
