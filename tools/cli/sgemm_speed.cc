#include "tools/cli/sgemm_speed.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace toyllm {

double SgemmGflops(int n) {
  openblas_set_num_threads(1);
  const size_t elements = static_cast<size_t>(n) * n;
  std::vector<float> a(elements, 0.5f), b(elements, 0.25f), c(elements);
  double best = 0;
  for (int run = 0; run < 8; ++run) {  // the best, on a machine that may be busy
    const auto start = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, 2.0 * n * n * n / seconds / 1e9);
  }
  return best;
}

}  // namespace toyllm
