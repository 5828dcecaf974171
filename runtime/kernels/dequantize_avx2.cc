// Dequantisation with AVX2 + F16C, 8 weights at a time. The block types unpack their quants
// with gemv_rows.h's vector unpackers (the ones decode multiplies with) and then compute
// UnpackedWeight's (d·scale)·(q − offset) − dmin·min in the same order, without fused
// multiply-adds (CMakeLists.txt turns contraction off for this file), so every weight equals
// ToFloat32's bit for bit.
#include <immintrin.h>

#include <cstring>

#include "runtime/kernels/dequantize.h"
#include "runtime/quant_blocks.h"
#include "runtime/weight_convert.h"

#include "runtime/kernels/target_avx2_begin.h"

#include "runtime/kernels/gemv_rows.h"  // after the target: its unpackers use the same target

namespace toyllm {
namespace {

struct Avx2Dequant {};  // gemv_rows.h's helpers, compiled for this file's target
using gemv_rows::KBlock;

// 16 unsigned quants of one group (bytes 0..15 of `q`) as weights, with the group's d·scale
// and dmin·min in every lane.
void Group(__m128i q, int offset, __m256 d_scale, __m256 dmin_min, float* out) {
  const __m256i lo = _mm256_sub_epi32(_mm256_cvtepu8_epi32(q), _mm256_set1_epi32(offset));
  const __m256i hi = _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(q, 8)), _mm256_set1_epi32(offset));
  _mm256_storeu_ps(out, _mm256_sub_ps(_mm256_mul_ps(d_scale, _mm256_cvtepi32_ps(lo)), dmin_min));
  _mm256_storeu_ps(out + 8, _mm256_sub_ps(_mm256_mul_ps(d_scale, _mm256_cvtepi32_ps(hi)), dmin_min));
}

// factor · each of 16 int16s, as two vectors of 8 floats.
void Times(float factor, __m256i v, __m256 out[2]) {
  const __m256 f = _mm256_set1_ps(factor);
  out[0] = _mm256_mul_ps(f, _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(v))));
  out[1] = _mm256_mul_ps(f, _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(v, 1))));
}

// The scales and mins stay in registers, read back from the unpacked block as whole vectors:
// gcc 12 dropped this loop's stores when they were read back one int16 at a time.
template <void (*kUnpack)(const uint8_t*, KBlock*), int kOffset>
void SuperBlocks(const uint8_t* p, int64_t n, int block_bytes, float* out) {
  KBlock k;
  for (int64_t b = 0; b < n / kSuperBlock; ++b, p += block_bytes, out += kSuperBlock) {
    kUnpack(p, &k);
    __m256 d_scale[2], dmin_min[2];
    Times(k.d, _mm256_load_si256(reinterpret_cast<const __m256i*>(k.scale)), d_scale);
    Times(k.dmin, _mm256_load_si256(reinterpret_cast<const __m256i*>(k.min)), dmin_min);
    for (int g = 0; g < 16; ++g) {  // group g: bytes 16·(g % 2) of chunk g / 2
      const __m256i lane = _mm256_set1_epi32(g % 8);
      const __m128i q = g % 2 == 0 ? _mm256_castsi256_si128(k.q[g / 2]) : _mm256_extracti128_si256(k.q[g / 2], 1);
      Group(q, kOffset, _mm256_permutevar8x32_ps(d_scale[g / 8], lane), _mm256_permutevar8x32_ps(dmin_min[g / 8], lane),
            out + 16 * g);
    }
  }
}

template <WeightType kType>
void LegacyBlocks(const uint8_t* p, int64_t n, float* out) {
  using L = LegacyLayout<kType>;
  // UnpackBlock's form: scale 1; min 1 with dmin = −m for the types with a min, else 0.
  for (int64_t b = 0; b < n / kQ8Block; ++b, p += L::kBytes, out += kQ8Block) {
    const __m256i q = gemv_rows::LegacyQuants<Avx2Dequant, kType>(p);
    const __m256 d = _mm256_set1_ps(gemv_rows::HalfAt<Avx2Dequant>(p));  // d·1
    const __m256 dmin_min = _mm256_set1_ps(L::kMin ? -gemv_rows::HalfAt<Avx2Dequant>(p + 2) : 0.0f);
    Group(_mm256_castsi256_si128(q), L::kOffset, d, dmin_min, out);
    Group(_mm256_extracti128_si256(q, 1), L::kOffset, d, dmin_min, out + 16);
  }
}

}  // namespace

void DequantizeAvx2(WeightType type, const void* data, int64_t n, float* out) {
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  const int block_bytes = BlockShapeOf(type).bytes;
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
    case WeightType::kQ4_0: LegacyBlocks<WeightType::kQ4_0>(bytes, n, out); return;
    case WeightType::kQ4_1: LegacyBlocks<WeightType::kQ4_1>(bytes, n, out); return;
    case WeightType::kQ5_0: LegacyBlocks<WeightType::kQ5_0>(bytes, n, out); return;
    case WeightType::kQ5_1: LegacyBlocks<WeightType::kQ5_1>(bytes, n, out); return;
    case WeightType::kIQ4_NL: LegacyBlocks<WeightType::kIQ4_NL>(bytes, n, out); return;
    case WeightType::kQ2_K: SuperBlocks<gemv_rows::UnpackQ2_K<Avx2Dequant>, 0>(bytes, n, block_bytes, out); return;
    case WeightType::kQ3_K: SuperBlocks<gemv_rows::UnpackQ3_K<Avx2Dequant>, 4>(bytes, n, block_bytes, out); return;
    case WeightType::kQ4_K: SuperBlocks<gemv_rows::UnpackQ45_K<Avx2Dequant, false>, 0>(bytes, n, block_bytes, out); return;
    case WeightType::kQ5_K: SuperBlocks<gemv_rows::UnpackQ45_K<Avx2Dequant, true>, 0>(bytes, n, block_bytes, out); return;
    case WeightType::kQ6_K: SuperBlocks<gemv_rows::UnpackQ6_K<Avx2Dequant>, 32>(bytes, n, block_bytes, out); return;
  }
  if (i < n) ToFloat32(type, bytes + WeightBytes(type, i), n - i, out + i);
}

}  // namespace toyllm

#include "runtime/kernels/target_end.h"
