// The pool runs every task of a run exactly once, on any number of threads, run after run.
#include "runtime/thread_pool.h"

#include <vector>

#include "gtest/gtest.h"

namespace toyllm {
namespace {

TEST(thread_pool, RunsEveryTaskOnceRunAfterRun) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (int run = 0; run < 2000; ++run) {
      const int n = 1 + run % 9;
      std::vector<int> count(n, 0);
      pool.Run(n, [&](int i) { ++count[i]; });  // each index is claimed by one thread only
      ASSERT_EQ(count, std::vector<int>(n, 1)) << "threads " << threads << " run " << run;
    }
  }
}

}  // namespace
}  // namespace toyllm
