#include "runtime/weight_convert.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/quant_unpack.h"
#include "runtime/quantize_blocks.h"

namespace toyllm {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

}  // namespace

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1f;
  const uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f) return FromBits(sign | 0x7f800000 | (mantissa << 13));  // inf, NaN
  if (exponent == 0) {  // zero or subnormal: mantissa · 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return FromBits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t FloatToHalf(float f) {
  const uint32_t u = Bits(f);
  const uint16_t sign = (u >> 16) & 0x8000;
  const float magnitude = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7e00;
  if (magnitude >= 65520.0f) return sign | 0x7c00;  // rounds to infinity
  if (magnitude < 6.103515625e-05f) {  // subnormal half: a multiple of 2^-24
    return sign | static_cast<uint16_t>(std::nearbyint(magnitude * 16777216.0f));
  }
  // Normal: keep 10 mantissa bits, rounding to nearest even on the 13 dropped ones.
  uint32_t rounded = (u & 0x7fffffff) + 0xfff + ((u >> 13) & 1);
  return sign | static_cast<uint16_t>((rounded >> 13) - (112 << 10));
}

float Bf16ToFloat(uint16_t b) { return FromBits(static_cast<uint32_t>(b) << 16); }

uint16_t FloatToBf16(float f) {
  const uint32_t u = Bits(f);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
  return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

void ToFloat32(WeightType type, const void* bytes, int64_t n, float* out) {
  const uint8_t* data = static_cast<const uint8_t*>(bytes);
  switch (type) {
    case WeightType::kF32:
      std::memcpy(out, data, n * sizeof(float));
      return;
    case WeightType::kF16:
    case WeightType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, data + 2 * i, 2);
        out[i] = type == WeightType::kF16 ? HalfToFloat(h) : Bf16ToFloat(h);
      }
      return;
    case WeightType::kQ8_0:
      for (int64_t b = 0; b < n / kQ8Block; ++b) {
        const uint8_t* block = data + b * sizeof(BlockQ8_0);
        uint16_t d;
        std::memcpy(&d, block, 2);
        const float scale = HalfToFloat(d);
        const int8_t* q = reinterpret_cast<const int8_t*>(block + 2);
        for (int j = 0; j < kQ8Block; ++j) out[b * kQ8Block + j] = q[j] * scale;
      }
      return;
    default: {
      const BlockShape shape = BlockShapeOf(type);
      UnpackedBlock block;
      for (int64_t b = 0; b < n / shape.elements; ++b) {
        UnpackBlock(type, data + b * shape.bytes, &block);
        for (int i = 0; i < shape.elements; ++i) out[b * shape.elements + i] = UnpackedWeight(block, i);
      }
      return;
    }
  }
}

void FromFloat32(WeightType type, const float* in, int64_t n, std::string* out) {
  switch (type) {
    case WeightType::kF32:
      out->append(reinterpret_cast<const char*>(in), n * sizeof(float));
      return;
    case WeightType::kF16:
    case WeightType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = type == WeightType::kF16 ? FloatToHalf(in[i]) : FloatToBf16(in[i]);
        out->append(reinterpret_cast<const char*>(&h), 2);
      }
      return;
    case WeightType::kQ8_0:
      // ggml's quantize_row_q8_0_ref: d = max|x| / 127, q = round(x / d).
      for (int64_t b = 0; b < n / kQ8Block; ++b) {
        const float* x = in + b * kQ8Block;
        float amax = 0.0f;
        for (int j = 0; j < kQ8Block; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        const uint16_t dh = FloatToHalf(d);
        out->append(reinterpret_cast<const char*>(&dh), 2);
        for (int j = 0; j < kQ8Block; ++j) {
          out->push_back(static_cast<char>(static_cast<int8_t>(std::roundf(x[j] * id))));
        }
      }
      return;
    default: {
      const BlockShape shape = BlockShapeOf(type);
      const size_t start = out->size();
      out->resize(start + WeightBytes(type, n));
      for (int64_t b = 0; b < n / shape.elements; ++b) {
        QuantizeBlock(type, in + b * shape.elements, out->data() + start + b * shape.bytes);
      }
      return;
    }
  }
}

}  // namespace toyllm
