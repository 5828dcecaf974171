// Included (not guarded) by a kernel file after its other includes and before its code:
// everything after it may use AVX-512 with VNNI and VBMI, and is only called where
// DetectedCpuLevel() allows. target_end.h closes it at the file's end.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,avx2,fma,f16c")
// gcc 12's own intrinsics self-initialise "undefined" registers (__m512 __Y = __Y), which
// its uninitialised-variable warnings flag inside avx512fintrin.h.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
