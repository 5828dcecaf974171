// How much memory this machine has: the limit the KV cache and any conversion of weights to
// float32 are checked against before they are allocated, so that an absurd size becomes an
// error message rather than an out-of-memory kill.
#ifndef TOYLLM_RUNTIME_PHYSICAL_MEMORY_H_
#define TOYLLM_RUNTIME_PHYSICAL_MEMORY_H_

#include <cstdint>

namespace toyllm {

int64_t PhysicalMemoryBytes();

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_PHYSICAL_MEMORY_H_
