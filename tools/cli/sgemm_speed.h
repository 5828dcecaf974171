// The speed of the BLAS's single-precision GEMM, the kernel prefill spends its time in:
// the figure that shows whether the BLAS runs the kernels the CPU can run.
#ifndef TOYLLM_TOOLS_CLI_SGEMM_SPEED_H_
#define TOYLLM_TOOLS_CLI_SGEMM_SPEED_H_

namespace toyllm {

// GFLOP/s of cblas_sgemm on two n×n float32 matrices, one thread, the best of a few runs.
double SgemmGflops(int n);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_SGEMM_SPEED_H_
