// Included (not guarded) by a kernel file after its other includes and before its code:
// everything after it may use AVX2, FMA and F16C, and is only called where
// DetectedCpuLevel() allows. target_end.h closes it at the file's end.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c")
#endif
