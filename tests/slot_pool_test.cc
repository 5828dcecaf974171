// The server's slot pool: leases up to N slots, a bounded queue of waiters beyond them, an
// empty lease past the queue (the server's 503), and Close releasing every waiter.
#include "tools/server/slot_pool.h"

#include <thread>

#include "gtest/gtest.h"

namespace toyllm {
namespace {

// The pool only hands transformers out; these tests never run one.
std::vector<std::unique_ptr<Transformer>> Slots(int n) { return std::vector<std::unique_ptr<Transformer>>(n); }

void WaitForWaiters(const SlotPool& pool, int n) {
  while (pool.waiting() != n) std::this_thread::yield();
}

TEST(SlotPool, LeasesEverySlotOnceThenQueuesThenRefuses) {
  SlotPool pool(Slots(2), /*max_waiting=*/1);
  SlotPool::Lease a = pool.Acquire();
  SlotPool::Lease b = pool.Acquire();
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_NE(a.index(), b.index());
  EXPECT_EQ(pool.busy(), 2);

  int waiter_index = -1;
  std::thread waiter([&] {
    SlotPool::Lease c = pool.Acquire();
    waiter_index = c ? c.index() : -2;
  });
  WaitForWaiters(pool, 1);
  EXPECT_FALSE(pool.Acquire()) << "the queue holds one waiter; the next request must be refused";

  const int freed = a.index();
  a = SlotPool::Lease();  // returns the slot: the waiter gets it
  waiter.join();
  EXPECT_EQ(waiter_index, freed);
  EXPECT_EQ(pool.busy(), 1);  // the waiter's lease ended with its thread
}

TEST(SlotPool, CloseWakesWaitersEmptyHandedAndRefusesNewOnes) {
  SlotPool pool(Slots(1), /*max_waiting=*/4);
  SlotPool::Lease held = pool.Acquire();
  ASSERT_TRUE(held);
  bool got = true;
  std::thread waiter([&] { got = static_cast<bool>(pool.Acquire()); });
  WaitForWaiters(pool, 1);
  pool.Close();
  waiter.join();
  EXPECT_FALSE(got);
  held = SlotPool::Lease();
  EXPECT_FALSE(pool.Acquire());
}

TEST(TurnTaking, SerialisesTheCriticalSection) {
  TurnTaking turns;
  int inside = 0, most_inside = 0, total = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        turns.Take();
        most_inside = std::max(most_inside, ++inside);
        ++total;
        --inside;
        turns.Release();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(most_inside, 1);
  EXPECT_EQ(total, 4000);
}

}  // namespace
}  // namespace toyllm
