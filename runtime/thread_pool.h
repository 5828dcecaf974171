// The runtime's one threading policy: a pool of T-1 workers plus the calling thread that
// split the rows of a weight matrix. OpenBLAS is kept single-threaded (each worker calls it
// on its own slice), so two thread pools never fight over the same cores.
#ifndef TOYLLM_RUNTIME_THREAD_POOL_H_
#define TOYLLM_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace toyllm {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // threads >= 1; starts threads - 1 workers
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs task(i) for every i in [0, size()), task(0) on the caller; returns when all are
  // done. Decode calls this ~50 times per token, so idle workers spin a little while
  // before they sleep: waking a sleeping thread costs tens of microseconds.
  void Run(const std::function<void(int)>& task);

 private:
  void Work(int index);

  std::vector<std::thread> workers_;
  const std::function<void(int)>* task_ = nullptr;
  std::atomic<uint64_t> generation_{0};  // bumped once per Run
  std::atomic<int> pending_{0};          // workers still running the current task
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<bool> stop_{false};
};

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_THREAD_POOL_H_
