// The vector instruction sets this machine offers, detected once; the kernels dispatch on it
// so one binary runs on plain x86-64, AVX2 and AVX-512 machines alike.
#ifndef TOYLLM_RUNTIME_CPU_FEATURES_H_
#define TOYLLM_RUNTIME_CPU_FEATURES_H_

namespace toyllm {

enum class CpuLevel {
  kScalar,  // portable C++
  kAvx2,    // AVX2 + FMA + F16C (Haswell, Zen 1 and later)
  kAvx512,  // AVX-512 F/BW/VL/VNNI/VBMI + the above (Ice Lake, Zen 4 and later; Skylake-X,
            // Cascade Lake and Cooper Lake, without VBMI, run the AVX2 kernels)
};

// The best level this CPU supports; TOYLLM_CPU=scalar|avx2 caps it (to compare paths).
CpuLevel DetectedCpuLevel();

// Whether the bf16 GEMM (runtime/kernels/gemm_bf16.h) can run: AVX-512 with BF16 (Cooper
// Lake, Sapphire Rapids, Zen 4 and later), and TOYLLM_CPU unset or empty: any cap, "avx512"
// included, is the way to keep exact float32 products on such a CPU.
bool CpuHasBf16Dot();

// Whether prefill takes that path: where CpuHasBf16Dot() and vdpbf16ps outruns FMA, which on
// the processors measured is AMD's (Zen 4, Zen 5) and not Intel's.
bool PrefillUsesBf16();

const char* CpuLevelName(CpuLevel level);

// What `info` and `bench` print: DetectedCpuLevel()'s name, then ", bf16 prefill" where
// PrefillUsesBf16().
const char* KernelsInUse();

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_CPU_FEATURES_H_
