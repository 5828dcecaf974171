#include "tools/cli/bandwidth.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

namespace toyllm {
namespace {

// Passes, of which the best counts: a shared host's other tenants take bandwidth in bursts.
// Two threads over 422 MiB of an Emerald Rapids VM, three probes each: best of 5 read
// 25.6–31.5 GB/s, best of 15 30.5–31.4 (and once 25.0).
constexpr int kPasses = 15;
// Bytes one pass reads at least: a pass over a cache-sized buffer sweeps it many times, so
// that starting the threads is a small part of the time.
constexpr size_t kPassBytes = size_t{256} << 20;
constexpr size_t kPageBytes = 4096;

// Two 64-bit lanes: a 16-byte vector load on every x86-64 CPU. Four independent
// accumulators read one 64-byte cache line per step, so no load waits on another's sum;
// memory, not arithmetic, is what limits the loop.
typedef uint64_t Lanes __attribute__((vector_size(16)));

// How far ahead the sweep asks for its lines, as decode's GEMV kernels do (runtime/kernels/
// prefetch.h): without it one thread of an Intel Xeon (Emerald Rapids) read 11 GB/s from
// DRAM, with it 15, and Q8_0 decode, which prefetches, reached 115 % of the lower bound.
constexpr int kPrefetchAhead = 4096;

// Sums the words of [begin, end) so that no load can be skipped.
uint64_t SumWords(const Lanes* begin, const Lanes* end) {
  Lanes a = {}, b = {}, c = {}, d = {};
  for (const Lanes* p = begin; p + 4 <= end; p += 4) {
    __builtin_prefetch(reinterpret_cast<const char*>(p) + kPrefetchAhead);
    a += p[0];
    b += p[1];
    c += p[2];
    d += p[3];
  }
  const Lanes sum = a + b + c + d;
  uint64_t total = 0;
  for (int i = 0; i < 2; ++i) total += sum[i];
  return total;
}

// The best pass's GB/s; runs in the child.
double BestPass(int threads, size_t bytes) {
  const size_t per_thread_bytes = std::max(kPageBytes, (bytes / threads + kPageBytes - 1) / kPageBytes * kPageBytes);
  const size_t buffer_bytes = per_thread_bytes * threads;
  const size_t per_thread = per_thread_bytes / sizeof(Lanes);
  const size_t sweeps = std::max<size_t>(1, kPassBytes / buffer_bytes);
  void* memory = mmap(nullptr, buffer_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return 0;
  // Huge pages where the kernel allows them: a 4 KiB page fault per page would take longer
  // than the measurement itself. (The child's exit frees the buffer.)
  madvise(memory, buffer_bytes, MADV_HUGEPAGE);
  const Lanes* buffer = static_cast<const Lanes*>(memory);
  std::memset(memory, 1, buffer_bytes);  // touch every page before timing
  std::vector<uint64_t> sums(threads);
  double best = 0;
  for (int pass = 0; pass < kPasses; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        const Lanes* begin = buffer + t * per_thread;
        for (size_t sweep = 0; sweep < sweeps; ++sweep) sums[t] += SumWords(begin, begin + per_thread);
      });
    }
    for (std::thread& w : workers) w.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(sweeps * buffer_bytes) / seconds / 1e9);
  }
  // A sum of ones in every byte is never zero: the check keeps the loads from being dropped.
  for (uint64_t s : sums) {
    if (s == 0) return 0;
  }
  return best;
}

}  // namespace

absl::StatusOr<double> MeasureReadBandwidth(int threads, int64_t bytes) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return absl::InternalError("bandwidth: cannot create a pipe");
  const pid_t child = fork();
  if (child < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return absl::InternalError("bandwidth: cannot fork");
  }
  if (child == 0) {
    const double gbs = BestPass(threads, static_cast<size_t>(std::max<int64_t>(bytes, 1)));
    const bool sent = write(pipe_fds[1], &gbs, sizeof(gbs)) == sizeof(gbs);
    _exit(sent ? 0 : 1);
  }
  close(pipe_fds[1]);
  double gbs = 0;
  const bool received = read(pipe_fds[0], &gbs, sizeof(gbs)) == sizeof(gbs);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!received || gbs <= 0) {
    return absl::InternalError(absl::StrCat("bandwidth: the measurement with ", threads,
                                            " threads failed (out of memory?)"));
  }
  return gbs;
}

}  // namespace toyllm
