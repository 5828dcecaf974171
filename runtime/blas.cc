#include "runtime/blas.h"

#include <cblas.h>
#include <dlfcn.h>

#include <cstdlib>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "runtime/cpu_features.h"

namespace toyllm {
namespace {

// OpenBLAS's x86 kernel sets by the instructions they use; every other one (Prescott,
// Core2, Nehalem, Sandybridge, ...) predates AVX2.
constexpr const char* kAvx2Cores[] = {"haswell", "zen", "excavator"};
constexpr const char* kAvx512Cores[] = {"skylakex", "cooperlake", "sapphirerapids"};

CpuLevel CoreLevel(const std::string& core) {
  const std::string name = absl::AsciiStrToLower(core);
  for (const char* c : kAvx512Cores) {
    if (name == c) return CpuLevel::kAvx512;
  }
  for (const char* c : kAvx2Cores) {
    if (name == c) return CpuLevel::kAvx2;
  }
  return CpuLevel::kScalar;
}

// OpenBLAS reads OPENBLAS_CORETYPE in its library constructor, which has run before any
// code of ours (it is our dependency). A DYNAMIC_ARCH build exports the pair of functions
// that constructor uses to pick its kernel table, so the choice can be made again, with
// the variable set, before the first product. Looked up in the very library that provides
// cblas_sgemm, so that it works when toyllm is dlopen'ed with local symbols (Python) too.
bool ReplaceCore(const char* core) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&cblas_sgemm), &info) == 0 || info.dli_fname == nullptr) return false;
  void* library = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (library == nullptr) return false;
  using Hook = void (*)();
  const auto quit = reinterpret_cast<Hook>(dlsym(library, "gotoblas_dynamic_quit"));
  const auto init = reinterpret_cast<Hook>(dlsym(library, "gotoblas_dynamic_init"));
  if (quit != nullptr && init != nullptr) {
    const char* before = std::getenv("OPENBLAS_CORETYPE");
    const std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;
    setenv("OPENBLAS_CORETYPE", core, 1);
    quit();
    init();
    // Child processes make their own choice, from what the user set.
    if (saved) setenv("OPENBLAS_CORETYPE", saved->c_str(), 1);
    else unsetenv("OPENBLAS_CORETYPE");
  }
  dlclose(library);
  return quit != nullptr && init != nullptr;
}

BlasInfo Inspect() {
  BlasInfo blas{openblas_get_config(), openblas_get_corename(), "", false};
  const CpuLevel level = DetectedCpuLevel();
  blas.fallback = IsFallbackCore(blas.core, level);
  const char* keep = std::getenv("TOYLLM_KEEP_BLAS_CORE");
  if (!blas.fallback || (keep != nullptr && std::string(keep) == "1")) return blas;
  if (ReplaceCore(level == CpuLevel::kAvx512 ? "SkylakeX" : "Haswell")) {
    blas.chosen_core = blas.core;
    blas.core = openblas_get_corename();
    blas.config = openblas_get_config();  // it names the core too
    blas.fallback = IsFallbackCore(blas.core, level);
  }
  return blas;
}

// Made when the library loads, before any product runs on the fallback kernels.
const BlasInfo& kLoaded = Blas();

}  // namespace

bool IsFallbackCore(const std::string& core, CpuLevel cpu) {
  return static_cast<int>(CoreLevel(core)) < static_cast<int>(cpu);
}

const BlasInfo& Blas() {
  static const BlasInfo blas = Inspect();
  return blas;
}

std::string BlasKernels() {
  const BlasInfo& b = Blas();
  if (b.fallback) return absl::StrCat(b.core, " (a generic fallback on this CPU: prefill runs slow)");
  if (!b.chosen_core.empty()) return absl::StrCat(b.core, " (OpenBLAS chose ", b.chosen_core, ", a fallback)");
  return b.core;
}

}  // namespace toyllm
