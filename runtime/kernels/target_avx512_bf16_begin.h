// Included (not guarded) by a kernel file after its other includes and before its code:
// everything after it may use AVX-512 with BF16, and is only called where CpuHasBf16Dot()
// allows. target_end.h closes it at the file's end.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma")
#pragma GCC diagnostic ignored "-Wuninitialized"  // as in target_avx512_begin.h
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
