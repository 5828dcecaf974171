// Prefill's products of non-float32 weights on AMD's CPUs with AVX512_BF16 (Zen 4 and
// later). vdpbf16ps multiplies pairs of bf16 values into float32 sums, 32 multiply-adds per
// instruction where an FMA does 16, so a prefill of quantized weights runs at twice sgemm's
// rate (1024 × 512 × 2048 on one Zen 4 core: 190–215 GFLOP/s against
// 95), ahead of llama.cpp's int8 products. The price is precision: both operands rounded to
// bf16's 8 significant bits, a relative error of at most 2⁻⁹ each (2.4e-3 RMS on a product
// of random rows) — the order of llama.cpp's rounding of activations to int8 for the same
// products, and below the quantization of the weights themselves. Float32 and float16
// weights keep sgemm's exact products; TOYLLM_CPU=avx512 turns this path off. Intel's cores
// (measured on Emerald Rapids) issue vdpbf16ps too seldom for it to pay, and stay on
// sgemm (PrefillUsesBf16 in runtime/cpu_features.cc).
#ifndef TOYLLM_RUNTIME_KERNELS_GEMM_BF16_H_
#define TOYLLM_RUNTIME_KERNELS_GEMM_BF16_H_

#include <cstdint>
#include <vector>

namespace toyllm {

// Rows of activations rounded to bf16, in the order the kernel reads them: panels of 16 rows
// (the last one padded with zeros), and in a panel, for each pair of columns (2p, 2p + 1),
// the 16 rows' pairs, one 32-bit word each (low half the even column).
struct Bf16Panels {
  int rows = 0;
  int cols = 0;                 // even
  std::vector<uint32_t> words;  // [panel][cols / 2][16]
};

// The kernels, only callable where CpuHasBf16Dot() (runtime/cpu_features.h) allows.
// x [rows, cols] into `out` (cols even).
void PackBf16Panels(const float* x, int rows, int cols, Bf16Panels* out);

// out[0, n / 2) = in[0, n) rounded to bf16, two to a word as above (n even): weight rows as
// the kernel reads them.
void RoundToBf16Pairs(const float* in, int64_t n, uint32_t* out);

// y[i · ldy + r] = x row i · w row r for every row i of x and r < rows, w `rows` rows of
// x.cols / 2 words from RoundToBf16Pairs; the sums in float32. With `add`, y += instead.
void GemmBf16(const Bf16Panels& x, const uint32_t* w, int rows, float* y, int ldy, bool add = false);

// Plain versions of the three, the tests' references: the same roundings (to nearest even,
// subnormals to zero, as the instructions do), products summed in float64.
void PackBf16PanelsScalar(const float* x, int rows, int cols, Bf16Panels* out);
void RoundToBf16PairsScalar(const float* in, int64_t n, uint32_t* out);
void GemmBf16Scalar(const Bf16Panels& x, const uint32_t* w, int rows, float* y, int ldy, bool add = false);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_GEMM_BF16_H_
