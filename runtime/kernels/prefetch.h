// Software prefetch for the GEMV kernels. Decode streams every weight once per token, and on
// one thread the processor's own prefetcher keeps too few cache lines in flight to reach the
// memory's bandwidth, the more so the longer a kernel works on each line; asking for the
// lines a few KiB ahead of the ones being read keeps enough requests outstanding.
#ifndef TOYLLM_RUNTIME_KERNELS_PREFETCH_H_
#define TOYLLM_RUNTIME_KERNELS_PREFETCH_H_

#include <xmmintrin.h>

namespace toyllm {

// Asks for the cache lines of [p + ahead, p + ahead + bytes).
inline void PrefetchAhead(const void* p, int bytes, int ahead) {
  const char* first = static_cast<const char*>(p) + ahead;
  for (int line = 0; line < bytes; line += 64) _mm_prefetch(first + line, _MM_HINT_T0);
}

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_PREFETCH_H_
