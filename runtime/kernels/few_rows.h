// Products of a few rows with a matrix that is read once: decode's attention, where the
// g query heads of a group share one cached key/value head. scores = q·Kᵀ and out =
// weights·V for those g rows cost one pass over K and one over V, however large g is,
// where one GEMV per head reads the cache g times; BLAS's GEMM would first copy the cache
// into its packed layout, a second pass as long as the first.
#ifndef TOYLLM_RUNTIME_KERNELS_FEW_ROWS_H_
#define TOYLLM_RUNTIME_KERNELS_FEW_ROWS_H_

#include "runtime/cpu_features.h"
#include "runtime/weights.h"

namespace toyllm {

// The most rows the kernels take; more, and GEMM's packing pays for itself.
constexpr int kFewRows = 16;

// Whether the kernels of `level` take m rows times b: m ≤ kFewRows, b float32 or f16, and
// (for the vector kernels) b's rows a whole number of 16 floats.
bool FewRowsTake(CpuLevel level, int m, const Matrix& b);

struct FewRowsKernels {
  // c[i·ldc + j] = alpha · (a[i·lda ..] · b.row(j)) for i < m, j < b.rows.
  void (*dots)(int m, float alpha, const float* a, int lda, const Matrix& b, float* c, int ldc);
  // c[i·ldc + e] = Σ_j a[i·lda + j] · b.row(j)[e] for i < m, e < b.cols.
  void (*sums)(int m, const float* a, int lda, const Matrix& b, float* c, int ldc);
};

// The scalar reference: float32 products summed in order.
extern const FewRowsKernels kFewRowsScalar;
// Only callable where DetectedCpuLevel() allows.
extern const FewRowsKernels kFewRowsAvx2;
extern const FewRowsKernels kFewRowsAvx512;

const FewRowsKernels& FewRowsFor(CpuLevel level);

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_FEW_ROWS_H_
