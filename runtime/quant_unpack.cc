#include "runtime/quant_unpack.h"

#include <cstring>

#include "runtime/quant_blocks.h"
#include "runtime/weight_convert.h"

namespace toyllm {
namespace {

template <class Block>
Block Load(const void* p) {
  Block b;
  std::memcpy(&b, p, sizeof(b));  // GGUF may misalign a tensor
  return b;
}

// A legacy 32-weight block: one scale of 1 for both groups of 16; the caller sets the rest.
void Legacy(const uint8_t* qs, uint32_t high_bits, int bits, UnpackedBlock* out) {
  out->n = 32;
  for (int j = 0; j < 16; ++j) {
    out->q[j] = qs[j] & 0xF;
    out->q[j + 16] = qs[j] >> 4;
  }
  if (bits == 5) {
    for (int i = 0; i < 32; ++i) out->q[i] |= ((high_bits >> i) & 1) << 4;
  }
  out->scale[0] = out->scale[1] = 1;
  out->min[0] = out->min[1] = 0;
  out->offset = 0;
  out->dmin = 0.0f;
}

// Q2_K's and Q3_K's two low bits: weight 128·half + 32·j + l in bits 2j of qs[32·half + l].
void TwoBitQuants(const uint8_t* qs, UnpackedBlock* out) {
  for (int half = 0; half < 2; ++half) {
    for (int j = 0; j < 4; ++j) {
      for (int l = 0; l < 32; ++l) out->q[128 * half + 32 * j + l] = (qs[32 * half + l] >> (2 * j)) & 3;
    }
  }
}

}  // namespace

void UnpackBlock(WeightType type, const void* block, UnpackedBlock* out) {
  switch (type) {
    case WeightType::kQ4_0: {
      const auto b = Load<BlockQ4_0>(block);
      Legacy(b.qs, 0, 4, out);
      out->d = HalfToFloat(b.d);
      out->offset = 8;
      return;
    }
    case WeightType::kIQ4_NL: {
      const auto b = Load<BlockQ4_0>(block);  // the same layout
      Legacy(b.qs, 0, 4, out);
      for (int i = 0; i < 32; ++i) out->q[i] = kIQ4_NLValuePlus128[out->q[i]];
      out->d = HalfToFloat(b.d);
      out->offset = 128;
      return;
    }
    case WeightType::kQ4_1: {
      const auto b = Load<BlockQ4_1>(block);
      Legacy(b.qs, 0, 4, out);
      out->d = HalfToFloat(b.d);
      out->min[0] = out->min[1] = 1;
      out->dmin = -HalfToFloat(b.m);
      return;
    }
    case WeightType::kQ5_0: {
      const auto b = Load<BlockQ5_0>(block);
      uint32_t qh;
      std::memcpy(&qh, b.qh, 4);
      Legacy(b.qs, qh, 5, out);
      out->d = HalfToFloat(b.d);
      out->offset = 16;
      return;
    }
    case WeightType::kQ5_1: {
      const auto b = Load<BlockQ5_1>(block);
      uint32_t qh;
      std::memcpy(&qh, b.qh, 4);
      Legacy(b.qs, qh, 5, out);
      out->d = HalfToFloat(b.d);
      out->min[0] = out->min[1] = 1;
      out->dmin = -HalfToFloat(b.m);
      return;
    }
    case WeightType::kQ2_K: {
      const auto b = Load<BlockQ2_K>(block);
      out->n = kSuperBlock;
      TwoBitQuants(b.qs, out);
      for (int g = 0; g < 16; ++g) {
        out->scale[g] = b.scales[g] & 0xF;
        out->min[g] = b.scales[g] >> 4;
      }
      out->offset = 0;
      out->d = HalfToFloat(b.d);
      out->dmin = HalfToFloat(b.dmin);
      return;
    }
    case WeightType::kQ3_K: {
      const auto b = Load<BlockQ3_K>(block);
      out->n = kSuperBlock;
      TwoBitQuants(b.qs, out);
      for (int i = 0; i < kSuperBlock; ++i) {
        const int half = i / 128, j = i % 128 / 32, l = i % 32;
        out->q[i] |= ((b.hmask[l] >> (4 * half + j)) & 1) << 2;
      }
      for (int g = 0; g < 16; ++g) {
        out->scale[g] = static_cast<int16_t>(ScaleQ3_K(b.scales, g) - 32);
        out->min[g] = 0;
      }
      out->offset = 4;
      out->d = HalfToFloat(b.d);
      out->dmin = 0.0f;
      return;
    }
    case WeightType::kQ4_K:
    case WeightType::kQ5_K: {
      // Q5_K is Q4_K's layout with qh inserted before qs.
      // Each block is read at its own size: the last one may end the tensor.
      const bool five = type == WeightType::kQ5_K;
      BlockQ5_K b5{};
      const auto b4 = five ? BlockQ4_K{} : Load<BlockQ4_K>(block);
      if (five) b5 = Load<BlockQ5_K>(block);
      const uint8_t* qs = five ? b5.qs : b4.qs;
      const uint8_t* scales = five ? b5.scales : b4.scales;
      const uint16_t d = five ? b5.d : b4.d, dmin = five ? b5.dmin : b4.dmin;
      out->n = kSuperBlock;
      for (int p = 0; p < 4; ++p) {  // runs of 64 weights sharing 32 bytes
        for (int l = 0; l < 32; ++l) {
          int lo = qs[32 * p + l] & 0xF, hi = qs[32 * p + l] >> 4;
          if (five) {
            lo |= ((b5.qh[l] >> (2 * p)) & 1) << 4;
            hi |= ((b5.qh[l] >> (2 * p + 1)) & 1) << 4;
          }
          out->q[64 * p + l] = static_cast<uint8_t>(lo);
          out->q[64 * p + 32 + l] = static_cast<uint8_t>(hi);
        }
      }
      for (int g = 0; g < 8; ++g) {
        int scale, min;
        ScaleMinK4(scales, g, &scale, &min);
        out->scale[2 * g] = out->scale[2 * g + 1] = static_cast<int16_t>(scale);
        out->min[2 * g] = out->min[2 * g + 1] = static_cast<int16_t>(min);
      }
      out->offset = 0;
      out->d = HalfToFloat(d);
      out->dmin = HalfToFloat(dmin);
      return;
    }
    case WeightType::kQ6_K: {
      const auto b = Load<BlockQ6_K>(block);
      out->n = kSuperBlock;
      for (int half = 0; half < 2; ++half) {
        const uint8_t* ql = b.ql + 64 * half;
        const uint8_t* qh = b.qh + 32 * half;
        uint8_t* q = out->q + 128 * half;
        for (int l = 0; l < 32; ++l) {
          q[l] = (ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4);
          q[l + 32] = (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4);
          q[l + 64] = (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4);
          q[l + 96] = (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4);
        }
      }
      for (int g = 0; g < 16; ++g) {
        out->scale[g] = b.scales[g];
        out->min[g] = 0;
      }
      out->offset = 32;
      out->d = HalfToFloat(b.d);
      out->dmin = 0.0f;
      return;
    }
    case WeightType::kF32:
    case WeightType::kF16:
    case WeightType::kBF16:
    case WeightType::kQ8_0:
      break;
  }
}

}  // namespace toyllm
