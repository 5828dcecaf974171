#include "runtime/quantize_blocks.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/quant_blocks.h"
#include "runtime/weight_convert.h"

namespace toyllm {
namespace {

// ggml's nearest_int: round half to even.
int Nearest(float f) { return static_cast<int>(std::nearbyint(f)); }

template <class Block>
void Store(const Block& b, void* out) {
  std::memcpy(out, &b, sizeof(b));
}

// The value of largest magnitude, with its sign.
float SignedMax(const float* x, int n) {
  float max = 0.0f, amax = 0.0f;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  return max;
}

// Q4_0 / Q5_0: d = max / −2^(bits−1), so the extreme value lands on the grid's end exactly.
void SymmetricLegacy(const float* x, int bits, uint16_t* d_out, uint8_t* qs, uint32_t* qh) {
  const int levels = 1 << bits;
  const float d = SignedMax(x, 32) / static_cast<float>(-levels / 2);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  *d_out = FloatToHalf(d);
  *qh = 0;
  for (int j = 0; j < 16; ++j) {
    const int q0 = std::min(levels - 1, static_cast<int>(x[j] * id + levels / 2 + 0.5f));
    const int q1 = std::min(levels - 1, static_cast<int>(x[j + 16] * id + levels / 2 + 0.5f));
    qs[j] = static_cast<uint8_t>((q0 & 0xF) | ((q1 & 0xF) << 4));
    *qh |= static_cast<uint32_t>((q0 >> 4) & 1) << j;
    *qh |= static_cast<uint32_t>((q1 >> 4) & 1) << (j + 16);
  }
}

// IQ4_NL: each weight takes the nearest of the 16 values at the block's scale; the scale
// that puts the extreme weight on the grid's far end (−127) is a start, and 15 scales
// around it are tried, each refitted by least squares weighted by x² (large weights
// matter most), keeping the one that explains most of Σw·x².
void NonLinear4(const float* x, uint16_t* d_out, uint8_t* qs) {
  const auto value = [](int i) { return kIQ4_NLValuePlus128[i] - 128; };
  float midpoints[15];  // the grid is sorted: v's nearest value is past every midpoint below v
  for (int i = 0; i < 15; ++i) midpoints[i] = 0.5f * static_cast<float>(value(i) + value(i + 1));
  const auto nearest = [&](float v) { return std::lower_bound(midpoints, midpoints + 15, v) - midpoints; };
  const float max = SignedMax(x, 32);
  uint8_t best_index[32] = {};
  float best_d = 0.0f, best_score = 0.0f;
  if (std::fabs(max) >= 1e-15f) {
    for (int t = -7; t <= 7; ++t) {
      const float id = (value(0) + t) / max;  // x = max lands on value(0) + t
      uint8_t index[32];
      float sum_qx = 0.0f, sum_q2 = 0.0f;
      for (int j = 0; j < 32; ++j) {
        index[j] = static_cast<uint8_t>(nearest(id * x[j]));
        const float q = static_cast<float>(value(index[j])), w = x[j] * x[j];
        sum_qx += w * q * x[j];
        sum_q2 += w * q * q;
      }
      if (sum_q2 > 0.0f && sum_qx * sum_qx / sum_q2 > best_score) {
        best_score = sum_qx * sum_qx / sum_q2;
        best_d = sum_qx / sum_q2;
        std::copy(index, index + 32, best_index);
      }
    }
  }
  *d_out = FloatToHalf(best_d);
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(best_index[j] | (best_index[j + 16] << 4));
}

// Q4_1 / Q5_1: the block's [min, max] in 2^bits − 1 steps.
void AffineLegacy(const float* x, int bits, uint16_t* d_out, uint16_t* m_out, uint8_t* qs,
                  uint32_t* qh) {
  const int top = (1 << bits) - 1;
  float min = x[0], max = x[0];
  for (int j = 1; j < 32; ++j) {
    min = std::min(min, x[j]);
    max = std::max(max, x[j]);
  }
  const float d = (max - min) / top;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  *d_out = FloatToHalf(d);
  *m_out = FloatToHalf(min);
  *qh = 0;
  for (int j = 0; j < 16; ++j) {
    const int q0 = std::min(top, static_cast<int>((x[j] - min) * id + 0.5f));
    const int q1 = std::min(top, static_cast<int>((x[j + 16] - min) * id + 0.5f));
    qs[j] = static_cast<uint8_t>((q0 & 0xF) | ((q1 & 0xF) << 4));
    *qh |= static_cast<uint32_t>((q0 >> 4) & 1) << j;
    *qh |= static_cast<uint32_t>((q1 >> 4) & 1) << (j + 16);
  }
}

// ggml's make_qkx2_quants: a scale and a min (returned as −min ≥ 0) for n values on the grid
// 0..nmax, minimising the weighted error: the plain [min, max] fit, then nstep scales
// around it, each refined by weighted least squares for scale and min together.
float ScaleAndMin(int n, int nmax, const float* x, const float* w, uint8_t* L, float* neg_min,
                  float rmin, float rdelta, int nstep, bool use_mad) {
  float min = x[0], max = x[0], sum_w = w[0], sum_x = w[0] * x[0];
  for (int i = 1; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill(L, L + n, 0);
    *neg_min = -min;
    return 0.0f;
  }
  const auto error = [&](float scale, float offset, const uint8_t* q) {
    float e = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float diff = scale * q[i] + offset - x[i];
      e += w[i] * (use_mad ? std::fabs(diff) : diff * diff);
    }
    return e;
  };
  float iscale = nmax / (max - min), scale = 1.0f / iscale;
  for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(std::clamp(Nearest(iscale * (x[i] - min)), 0, nmax));
  float best = error(scale, min, L);
  uint8_t aux[32];
  for (int step = 0; step <= nstep; ++step) {
    iscale = (rmin + rdelta * step + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(Nearest(iscale * (x[i] - min)), 0, nmax);
      aux[i] = static_cast<uint8_t>(l);
      sum_l += w[i] * l;
      sum_l2 += w[i] * l * l;
      sum_xl += w[i] * l * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det <= 0) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (this_min > 0) {
      this_min = 0;
      this_scale = sum_xl / sum_l2;
    }
    const float e = error(this_scale, this_min, aux);
    if (e < best) {
      std::copy(aux, aux + n, L);
      best = e;
      scale = this_scale;
      min = this_min;
    }
  }
  *neg_min = -min;
  return scale;
}

// ggml's make_qx_quants with rmse_type 1 (weights x²): a signed scale for n values on the
// grid −nmax..nmax−1 (L stores them + nmax), trying 18 scales around max / −nmax.
float SignedScale(int n, int nmax, const float* x, uint8_t* L) {
  const float max = SignedMax(x, n);
  if (std::fabs(max) < 1e-15f) {
    std::fill(L, L + n, 0);
    return 0.0f;
  }
  const auto fit = [&](float iscale, float* sum_lx, float* sum_l2, bool store) {
    *sum_lx = *sum_l2 = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(Nearest(iscale * x[i]), -nmax, nmax - 1);
      if (store) L[i] = static_cast<uint8_t>(l + nmax);
      const float w = x[i] * x[i];
      *sum_lx += w * x[i] * l;
      *sum_l2 += w * l * l;
    }
  };
  float sum_lx, sum_l2;
  fit(-nmax / max, &sum_lx, &sum_l2, true);
  float scale = sum_l2 > 0 ? sum_lx / sum_l2 : 0.0f;
  float best = scale * sum_lx;
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    const float iscale = -(nmax + 0.1f * step) / max;
    fit(iscale, &sum_lx, &sum_l2, false);
    if (sum_l2 > 0 && sum_lx * sum_lx > best * sum_l2) {
      fit(iscale, &sum_lx, &sum_l2, true);
      scale = sum_lx / sum_l2;
      best = scale * sum_lx;
    }
  }
  return scale;
}

// ggml's make_q3_quants with do_rmse: the grid −nmax..nmax−1 (L stores them + nmax), then
// up to five passes moving single values to the level that most lowers the x²-weighted error.
float SignedScaleRefined(int n, int nmax, const float* x, uint8_t* L) {
  const float max = SignedMax(x, n);
  if (std::fabs(max) < 1e-15f) {
    std::fill(L, L + n, 0);
    return 0.0f;
  }
  const float iscale = -nmax / max;
  int l[16];
  float sum_lx = 0, sum_l2 = 0;
  for (int i = 0; i < n; ++i) {
    l[i] = std::clamp(Nearest(iscale * x[i]), -nmax, nmax - 1);
    const float w = x[i] * x[i];
    sum_lx += w * x[i] * l[i];
    sum_l2 += w * l[i] * l[i];
  }
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sum_lx - w * x[i] * l[i];
      if (slx <= 0) continue;
      float sl2 = sum_l2 - w * l[i] * l[i];
      const int new_l = std::clamp(Nearest(x[i] * sl2 / slx), -nmax, nmax - 1);
      if (new_l == l[i]) continue;
      slx += w * x[i] * new_l;
      sl2 += w * new_l * new_l;
      if (sl2 > 0 && slx * slx * sum_l2 > sum_lx * sum_lx * sl2) {
        l[i] = new_l;
        sum_lx = slx;
        sum_l2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(l[i] + nmax);
  return sum_l2 > 0 ? sum_lx / sum_l2 : 0.0f;
}

// Q2_K's and Q3_K's packing of 2-bit values (see BlockQ2_K).
void PackTwoBits(const uint8_t* L, uint8_t* qs) {
  for (int half = 0; half < 2; ++half) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t* q = L + 128 * half + l;
      qs[32 * half + l] = static_cast<uint8_t>((q[0] & 3) | ((q[32] & 3) << 2) | ((q[64] & 3) << 4) | ((q[96] & 3) << 6));
    }
  }
}

// Re-rounds every group's values once the scales are quantized: value = d·q − dm.
void Requantize(const float* x, int group, float d, float dm, int lo, int hi, uint8_t* L) {
  if (d == 0.0f) return;
  for (int i = 0; i < group; ++i) L[i] = static_cast<uint8_t>(std::clamp(Nearest((x[i] + dm) / d), lo, hi) - lo);
}

void QuantizeQ2_K(const float* x, BlockQ2_K* y) {
  uint8_t L[kSuperBlock];
  float scales[16], mins[16], w[16], max_scale = 0, max_min = 0;
  for (int g = 0; g < 16; ++g) {
    for (int l = 0; l < 16; ++l) w[l] = std::fabs(x[16 * g + l]);
    scales[g] = ScaleAndMin(16, 3, x + 16 * g, w, L + 16 * g, &mins[g], -0.5f, 0.1f, 15, true);
    max_scale = std::max(max_scale, scales[g]);
    max_min = std::max(max_min, mins[g]);
  }
  std::memset(y, 0, sizeof(*y));
  if (max_scale > 0) {
    for (int g = 0; g < 16; ++g) y->scales[g] = static_cast<uint8_t>(Nearest(15 / max_scale * scales[g]));
    y->d = FloatToHalf(max_scale / 15);
  }
  if (max_min > 0) {
    for (int g = 0; g < 16; ++g) y->scales[g] |= static_cast<uint8_t>(Nearest(15 / max_min * mins[g]) << 4);
    y->dmin = FloatToHalf(max_min / 15);
  }
  for (int g = 0; g < 16; ++g) {
    Requantize(x + 16 * g, 16, HalfToFloat(y->d) * (y->scales[g] & 0xF),
               HalfToFloat(y->dmin) * (y->scales[g] >> 4), 0, 3, L + 16 * g);
  }
  PackTwoBits(L, y->qs);
}

void QuantizeQ3_K(const float* x, BlockQ3_K* y) {
  uint8_t L[kSuperBlock];
  float scales[16];
  for (int g = 0; g < 16; ++g) scales[g] = SignedScaleRefined(16, 4, x + 16 * g, L + 16 * g);
  const float max_scale = SignedMax(scales, 16);
  std::memset(y, 0, sizeof(*y));
  if (max_scale != 0) {
    const float iscale = -32 / max_scale;
    for (int g = 0; g < 16; ++g) {
      const int l = std::clamp(Nearest(iscale * scales[g]), -32, 31) + 32;
      if (g < 8) {
        y->scales[g] = static_cast<uint8_t>(l & 0xF);
      } else {
        y->scales[g - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
      }
      y->scales[8 + g % 4] |= static_cast<uint8_t>((l >> 4) << (2 * (g / 4)));
    }
    y->d = FloatToHalf(1 / iscale);
  }
  for (int g = 0; g < 16; ++g) {
    Requantize(x + 16 * g, 16, HalfToFloat(y->d) * (ScaleQ3_K(y->scales, g) - 32), 0, -4, 3, L + 16 * g);
  }
  for (int i = 0; i < kSuperBlock; ++i) {
    if (L[i] > 3) {
      y->hmask[i % 32] |= static_cast<uint8_t>(1 << (i / 32));
      L[i] -= 4;
    }
  }
  PackTwoBits(L, y->qs);
}

// Q4_K and Q5_K: eight groups of 32, weighted by rms + |x| as llama.cpp weights them.
void QuantizeQ45_K(const float* x, int nmax, float rmin, int nstep, uint16_t* d, uint16_t* dmin,
                   uint8_t* packed_scales, uint8_t* L) {
  float scales[8], mins[8], w[32], max_scale = 0, max_min = 0;
  for (int g = 0; g < 8; ++g) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * g + l] * x[32 * g + l];
    const float rms = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) w[l] = rms + std::fabs(x[32 * g + l]);
    scales[g] = ScaleAndMin(32, nmax, x + 32 * g, w, L + 32 * g, &mins[g], rmin, 0.1f, nstep, false);
    max_scale = std::max(max_scale, scales[g]);
    max_min = std::max(max_min, mins[g]);
  }
  const float inv_scale = max_scale > 0 ? 63 / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63 / max_min : 0.0f;
  std::memset(packed_scales, 0, 12);
  for (int g = 0; g < 8; ++g) {
    const int ls = std::min(63, Nearest(inv_scale * scales[g]));
    const int lm = std::min(63, Nearest(inv_min * mins[g]));
    if (g < 4) {
      packed_scales[g] = static_cast<uint8_t>(ls);
      packed_scales[g + 4] = static_cast<uint8_t>(lm);
    } else {
      packed_scales[g + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      packed_scales[g - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
      packed_scales[g] |= static_cast<uint8_t>((lm >> 4) << 6);
    }
  }
  *d = FloatToHalf(max_scale / 63);
  *dmin = FloatToHalf(max_min / 63);
  for (int g = 0; g < 8; ++g) {
    int sc, m;
    ScaleMinK4(packed_scales, g, &sc, &m);
    Requantize(x + 32 * g, 32, HalfToFloat(*d) * sc, HalfToFloat(*dmin) * m, 0, nmax, L + 32 * g);
  }
}

void QuantizeQ6_K(const float* x, BlockQ6_K* y) {
  uint8_t L[kSuperBlock];
  float scales[16];
  for (int g = 0; g < 16; ++g) scales[g] = SignedScale(16, 32, x + 16 * g, L + 16 * g);
  const float max_scale = SignedMax(scales, 16);
  std::memset(y, 0, sizeof(*y));
  if (std::fabs(max_scale) < 1e-15f) return;  // all zero: d = 0
  const float iscale = -128 / max_scale;
  y->d = FloatToHalf(1 / iscale);
  for (int g = 0; g < 16; ++g) y->scales[g] = static_cast<int8_t>(std::min(127, Nearest(iscale * scales[g])));
  for (int g = 0; g < 16; ++g) Requantize(x + 16 * g, 16, HalfToFloat(y->d) * y->scales[g], 0, -32, 31, L + 16 * g);
  for (int half = 0; half < 2; ++half) {
    const uint8_t* q = L + 128 * half;
    for (int l = 0; l < 32; ++l) {
      y->ql[64 * half + l] = static_cast<uint8_t>((q[l] & 0xF) | ((q[l + 64] & 0xF) << 4));
      y->ql[64 * half + l + 32] = static_cast<uint8_t>((q[l + 32] & 0xF) | ((q[l + 96] & 0xF) << 4));
      y->qh[32 * half + l] = static_cast<uint8_t>((q[l] >> 4) | ((q[l + 32] >> 4) << 2) |
                                                  ((q[l + 64] >> 4) << 4) | ((q[l + 96] >> 4) << 6));
    }
  }
}

}  // namespace

void QuantizeBlock(WeightType type, const float* x, void* out) {
  switch (type) {
    case WeightType::kQ4_0:
    case WeightType::kQ5_0: {
      BlockQ5_0 b;  // Q4_0 is the same without qh
      uint32_t qh;
      SymmetricLegacy(x, type == WeightType::kQ4_0 ? 4 : 5, &b.d, b.qs, &qh);
      std::memcpy(b.qh, &qh, 4);
      if (type == WeightType::kQ5_0) return Store(b, out);
      BlockQ4_0 b4;
      b4.d = b.d;
      std::memcpy(b4.qs, b.qs, 16);
      return Store(b4, out);
    }
    case WeightType::kIQ4_NL: {
      BlockQ4_0 b;  // the same layout
      NonLinear4(x, &b.d, b.qs);
      return Store(b, out);
    }
    case WeightType::kQ4_1:
    case WeightType::kQ5_1: {
      BlockQ5_1 b;
      uint32_t qh;
      AffineLegacy(x, type == WeightType::kQ4_1 ? 4 : 5, &b.d, &b.m, b.qs, &qh);
      std::memcpy(b.qh, &qh, 4);
      if (type == WeightType::kQ5_1) return Store(b, out);
      BlockQ4_1 b4;
      b4.d = b.d;
      b4.m = b.m;
      std::memcpy(b4.qs, b.qs, 16);
      return Store(b4, out);
    }
    case WeightType::kQ2_K: {
      BlockQ2_K b;
      QuantizeQ2_K(x, &b);
      return Store(b, out);
    }
    case WeightType::kQ3_K: {
      BlockQ3_K b;
      QuantizeQ3_K(x, &b);
      return Store(b, out);
    }
    case WeightType::kQ4_K: {
      BlockQ4_K b;
      uint8_t L[kSuperBlock];
      QuantizeQ45_K(x, 15, -1.0f, 20, &b.d, &b.dmin, b.scales, L);
      for (int p = 0; p < 4; ++p) {
        for (int l = 0; l < 32; ++l) b.qs[32 * p + l] = static_cast<uint8_t>(L[64 * p + l] | (L[64 * p + 32 + l] << 4));
      }
      return Store(b, out);
    }
    case WeightType::kQ5_K: {
      BlockQ5_K b;
      uint8_t L[kSuperBlock];
      QuantizeQ45_K(x, 31, -0.5f, 15, &b.d, &b.dmin, b.scales, L);
      std::memset(b.qh, 0, sizeof(b.qh));
      for (int p = 0; p < 4; ++p) {
        for (int l = 0; l < 32; ++l) {
          const int lo = L[64 * p + l], hi = L[64 * p + 32 + l];
          b.qs[32 * p + l] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
          b.qh[l] |= static_cast<uint8_t>(((lo >> 4) << (2 * p)) | ((hi >> 4) << (2 * p + 1)));
        }
      }
      return Store(b, out);
    }
    case WeightType::kQ6_K: {
      BlockQ6_K b;
      QuantizeQ6_K(x, &b);
      return Store(b, out);
    }
    case WeightType::kF32:
    case WeightType::kF16:
    case WeightType::kBF16:
    case WeightType::kQ8_0:
      break;
  }
}

}  // namespace toyllm
