// The runtime's one threading policy: a pool of T-1 workers plus the calling thread that
// share the rows of a weight matrix. OpenBLAS is kept single-threaded (each thread calls it
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

  // Runs task(i) for every i in [0, n) (n < 65536) and returns when all are done. Each
  // thread, the caller included, claims tasks until none is left, so when another process
  // holds a core the caller simply does more of the work instead of waiting for a worker.
  // Decode calls this ~50 times per token, so idle workers spin a little while before
  // they sleep: waking a sleeping thread costs tens of microseconds.
  void Run(int n, const std::function<void(int)>& task);

 private:
  // state_ packs the run's generation (high 32 bits), the next unclaimed task (16) and
  // the number of tasks (16), so one compare-and-swap claims a task of one run only.
  static uint64_t Pack(uint64_t generation, int next, int n) {
    return generation << 32 | static_cast<uint64_t>(next) << 16 | static_cast<uint64_t>(n);
  }
  // Claims and runs tasks of the current run while any is left.
  void RunTasks();
  void Work();

  std::vector<std::thread> workers_;
  std::atomic<const std::function<void(int)>*> task_{nullptr};
  std::atomic<uint64_t> state_{0};
  std::atomic<int> done_{0};  // tasks of the current run finished
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<bool> stop_{false};
};

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_THREAD_POOL_H_
