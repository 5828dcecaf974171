#include "runtime/thread_pool.h"

#include <chrono>

namespace toyllm {
namespace {

// How long an idle worker polls for the next run before sleeping: longer than the gap
// between two matrix products of a decode step, far shorter than a human notices.
constexpr auto kSpin = std::chrono::microseconds(200);

// Polling pauses for the first few polls, then yields the core. A decode step's products
// follow each other within microseconds, and a yield is a system call (slower still in a
// VM) that delays noticing the next run. But a poller that only pauses takes time slices
// from the very thread it waits for on a machine busy with other work (15M shape, other
// builds running: 2 threads at 105 tok/s pausing, 165 yielding, 1 thread 170).
void Yield(int polls) {
  if (polls < 64) {
#if defined(__x86_64__)
    for (int i = 0; i < 16; ++i) __builtin_ia32_pause();
#endif
  } else {
    std::this_thread::yield();
  }
}

uint32_t Generation(uint64_t state) { return static_cast<uint32_t>(state >> 32); }
int Next(uint64_t state) { return static_cast<int>(state >> 16 & 0xffff); }
int Count(uint64_t state) { return static_cast<int>(state & 0xffff); }

}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { Work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_relaxed);
    state_.store(Pack(Generation(state_.load()) + 1, 0, 0), std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::Run(int n, const std::function<void(int)>& task) {
  if (workers_.empty() || n == 1) {
    for (int i = 0; i < n; ++i) task(i);
    return;
  }
  // The previous run is complete (every task claimed and done), so no worker still uses
  // task_ or counts into done_.
  task_.store(&task, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  {
    // Under the lock, so a worker between its last check and its wait cannot miss it.
    std::lock_guard<std::mutex> lock(mutex_);
    state_.store(Pack(Generation(state_.load()) + 1, 0, n), std::memory_order_release);
  }
  wake_.notify_all();
  RunTasks();
  for (int i = 0; done_.load(std::memory_order_acquire) != n; ++i) Yield(i);
}

void ThreadPool::RunTasks() {
  uint64_t state = state_.load(std::memory_order_acquire);
  while (Next(state) < Count(state)) {
    // Read before claiming: a successful claim proves the run was still this one, and a
    // run's task_ is set before its state is published.
    const std::function<void(int)>* task = task_.load(std::memory_order_relaxed);
    if (!state_.compare_exchange_weak(state, state + (uint64_t{1} << 16),
                                      std::memory_order_acq_rel, std::memory_order_acquire)) {
      continue;  // `state` now holds the current value
    }
    (*task)(Next(state));
    done_.fetch_add(1, std::memory_order_release);
    state = state_.load(std::memory_order_acquire);
  }
}

void ThreadPool::Work() {
  uint32_t seen = 0;
  for (;;) {
    const auto spin_until = std::chrono::steady_clock::now() + kSpin;
    uint32_t now_at = Generation(state_.load(std::memory_order_acquire));
    for (int i = 1; now_at == seen; ++i) {
      Yield(i);
      if (i % 16 == 0 && std::chrono::steady_clock::now() > spin_until) break;
      now_at = Generation(state_.load(std::memory_order_acquire));
    }
    if (now_at == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return Generation(state_.load(std::memory_order_acquire)) != seen; });
      now_at = Generation(state_.load(std::memory_order_acquire));
    }
    seen = now_at;
    if (stop_.load(std::memory_order_relaxed)) return;
    RunTasks();
  }
}

}  // namespace toyllm
