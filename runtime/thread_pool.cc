#include "runtime/thread_pool.h"

#include <chrono>

namespace toyllm {
namespace {

// How long an idle worker polls for the next task before sleeping: longer than the gap
// between two matrix products of a decode step, far shorter than a human notices.
constexpr auto kSpin = std::chrono::microseconds(200);

void Pause() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { Work(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::Run(const std::function<void(int)>& task) {
  if (workers_.empty()) {
    task(0);
    return;
  }
  task_ = &task;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  {
    // Under the lock, so a worker between its last check and its wait cannot miss it.
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  task(0);
  while (pending_.load(std::memory_order_acquire) != 0) Pause();
}

void ThreadPool::Work(int index) {
  uint64_t seen = 0;
  for (;;) {
    const auto spin_until = std::chrono::steady_clock::now() + kSpin;
    uint64_t now_at = generation_.load(std::memory_order_acquire);
    for (int i = 0; now_at == seen; ++i) {
      Pause();
      if (i % 64 == 0 && std::chrono::steady_clock::now() > spin_until) break;
      now_at = generation_.load(std::memory_order_acquire);
    }
    if (now_at == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      now_at = generation_.load(std::memory_order_acquire);
    }
    seen = now_at;
    if (stop_.load(std::memory_order_relaxed)) return;  // ordered by generation_'s acquire
    (*task_)(index);
    pending_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace toyllm
