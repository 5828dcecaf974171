// The numerical building blocks of the forward pass. Decode's matrix products (one row)
// use the GEMV kernels of runtime/kernels, batches go through BLAS; the element-wise ops
// are plain loops that accumulate in float, in llama2.c's order, but for the two with an
// exponential per entry, softmax and SwiGLU, which have vector kernels there.
#ifndef TOYLLM_RUNTIME_OPS_H_
#define TOYLLM_RUNTIME_OPS_H_

#include <cstdint>
#include <functional>
#include <initializer_list>

#include "runtime/weights.h"

namespace toyllm {

// Threads that share one matrix product (runtime/thread_pool.h); BLAS itself stays on one.
void SetThreadCount(int n);

// Runs body(i) for every i in [0, n) on the threads SetThreadCount gave, in any order; on
// the calling thread alone when `work` (multiply-adds in all) would not pay for a hand-off.
void ParallelFor(int n, int64_t work, const std::function<void(int)>& body);

// y[n, w.rows] = x[n, w.cols] · wᵀ: a linear layer applied to n rows at once (GEMV for one
// row, GEMM for a batch), with w in any WeightType.
void Linear(const float* x, int n, const Matrix& w, float* y);

// Whether Linear on a batch (n > 1) rounds x and w to bf16 for the bf16 GEMM (runtime/
// kernels/gemm_bf16.h): where PrefillUsesBf16(), for the quantized types and bf16, whose
// own precision is no finer than bf16's. Float32 and float16 weights keep exact products.
bool BatchRoundsToBf16(const Matrix& w);

// Several linear layers of the same x (q, k and v; gate and up) as one product: the threads
// split their rows together, one hand-off instead of one per matrix. Each w has x's width.
// A layer with `add` sums its product into y: y += x · wᵀ.
struct LinearLayer {
  const Matrix& w;
  float* y;
  bool add = false;
};
void Linear(const float* x, int n, std::initializer_list<LinearLayer> layers);

// c[m, n] = alpha · a[m, k] · b[n, k]ᵀ, each matrix row-major with its own row stride.
void MatMulTransposed(int m, int n, int k, float alpha, const float* a, int lda,
                      const float* b, int ldb, float* c, int ldc);

// c[m, n] = a[m, k] · b[k, n], each matrix row-major with its own row stride.
void MatMul(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
            int ldc);

// The same two products with b a matrix of any WeightType ([n, k] and [k, n] rows): the
// KV cache's keys and values. Up to kFewRows rows of a (decode: a group's queries) read b
// once as stored, converting in registers or in small tiles, so an f16 cache is read at
// half the bytes (runtime/kernels/few_rows.h); more rows convert b to float32 once and go
// through BLAS.
void MatMulTransposed(int m, float alpha, const float* a, int lda, const Matrix& b, float* c, int ldc);
void MatMul(int m, const float* a, int lda, const Matrix& b, float* c, int ldc);

// out = weight ⊙ x / sqrt(mean(x²) + eps), for one row of length n.
void RmsNorm(float* out, const float* x, const float* weight, int n, float eps);

// x = softmax(x) over n entries; subtracts the maximum first so exp cannot overflow.
void Softmax(float* x, int n);

// gate = silu(gate) ⊙ up: the SwiGLU non-linearity of the feed-forward layer.
void SwiGlu(float* gate, const float* up, int n);

// x += y over n entries: the residual connection.
void AddInPlace(float* x, const float* y, int n);

// Adds bias [width] to each of the n rows of x [n, width]: a linear layer's bias.
void AddBias(float* x, const float* bias, int n, int width);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_OPS_H_
