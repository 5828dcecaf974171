#include "tools/cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace toyllm {

void ShowProgress(const std::string& label, size_t done, size_t total) {
  if (!isatty(STDERR_FILENO) || total == 0) return;
  constexpr int kWidth = 40;
  const int filled = static_cast<int>(kWidth * done / total);
  std::string bar(kWidth, ' ');
  for (int i = 0; i < filled; ++i) bar[i] = '=';
  if (filled < kWidth) bar[filled] = '>';
  std::fprintf(stderr, "\r%s [%s] %zu/%zu", label.c_str(), bar.c_str(), done, total);
  if (done == total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace toyllm
