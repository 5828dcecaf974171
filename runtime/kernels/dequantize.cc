#include "runtime/kernels/dequantize.h"

#include <immintrin.h>

#include <cstring>

#include "runtime/cpu_features.h"
#include "runtime/weight_convert.h"

namespace toyllm {
namespace {

// 8 weights at a time with AVX2 + F16C; the scalar ToFloat32 does any remainder. The
// conversions are exact, so the result equals ToFloat32's bit for bit.
__attribute__((target("avx2,fma,f16c"))) void DequantizeAvx2(WeightType type, const void* data,
                                                            int64_t n, float* out) {
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  int64_t i = 0;
  switch (type) {
    case WeightType::kF32:
      break;
    case WeightType::kF16:
      for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + 2 * i));
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
      }
      break;
    case WeightType::kBF16:
      for (; i + 8 <= n; i += 8) {
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + 2 * i));
        _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16)));
      }
      break;
    case WeightType::kQ8_0:
      for (; i + kQ8Block <= n; i += kQ8Block) {
        const BlockQ8_0* block = reinterpret_cast<const BlockQ8_0*>(bytes) + i / kQ8Block;
        uint16_t scale_bits;
        std::memcpy(&scale_bits, &block->scale, sizeof(scale_bits));
        const __m256 scale = _mm256_set1_ps(_cvtsh_ss(scale_bits));
        for (int j = 0; j < kQ8Block; j += 8) {
          const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(block->q + j));
          _mm256_storeu_ps(out + i + j, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), scale));
        }
      }
      break;
    default:  // the other block types: ToFloat32's unpacking
      break;
  }
  if (i < n) ToFloat32(type, bytes + WeightBytes(type, i), n - i, out + i);
}

}  // namespace

void Dequantize(WeightType type, const void* data, int64_t n, float* out) {
  if (DetectedCpuLevel() >= CpuLevel::kAvx2) {
    DequantizeAvx2(type, data, n, out);
  } else {
    ToFloat32(type, data, n, out);
  }
}

}  // namespace toyllm
