#include "runtime/ops.h"

#include <cblas.h>

#include <cmath>

namespace toyllm {

void SetThreadCount(int n) { openblas_set_num_threads(n); }

void Linear(const float* x, int n, const Matrix& w, float* y) {
  if (n == 1) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, w.rows, w.cols, 1.0f, w.data, w.cols, x, 1, 0.0f,
                y, 1);
    return;
  }
  MatMulTransposed(n, w.rows, w.cols, 1.0f, x, w.cols, w.data, w.cols, y, w.rows);
}

void MatMulTransposed(int m, int n, int k, float alpha, const float* a, int lda,
                      const float* b, int ldb, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, alpha, a, lda, b, ldb, 0.0f, c,
              ldc);
}

void MatMul(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
            int ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c,
              ldc);
}

void RmsNorm(float* out, const float* x, const float* weight, int n, float eps) {
  float ss = 0.0f;
  for (int i = 0; i < n; ++i) ss += x[i] * x[i];
  const float scale = 1.0f / sqrtf(ss / n + eps);
  for (int i = 0; i < n; ++i) out[i] = weight[i] * (scale * x[i]);
}

void Softmax(float* x, int n) {
  float max = x[0];
  for (int i = 1; i < n; ++i) max = x[i] > max ? x[i] : max;
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    x[i] = expf(x[i] - max);
    sum += x[i];
  }
  for (int i = 0; i < n; ++i) x[i] /= sum;
}

void SwiGlu(float* gate, const float* up, int n) {
  for (int i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g * (1.0f / (1.0f + expf(-g))) * up[i];
  }
}

void AddInPlace(float* x, const float* y, int n) {
  for (int i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace toyllm
