// The server's generation slots: N transformers over the same mapped weights, each with its
// own KV cache. A request leases a free slot, waiting in a bounded queue when all are busy;
// beyond the queue it is turned away. The slots take turns at the cores one forward pass at
// a time (the runtime's thread pool serves one pass at once), in the order they asked.
#ifndef TOYLLM_TOOLS_SERVER_SLOT_POOL_H_
#define TOYLLM_TOOLS_SERVER_SLOT_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/transformer.h"

namespace toyllm {

// A first-come, first-served lock: each Take waits for every Take that began before it.
class TurnTaking {
 public:
  void Take();
  void Release();

 private:
  std::mutex mutex_;
  std::condition_variable turn_;
  uint64_t next_ticket_ = 0;
  uint64_t serving_ = 0;
};

class SlotPool {
 public:
  SlotPool(std::vector<std::unique_ptr<Transformer>> slots, int max_waiting);

  // A slot while the lease lives; an empty lease when the queue is full or the pool closed.
  class Lease {
   public:
    Lease() = default;
    Lease(SlotPool* pool, int index) : pool_(pool), index_(index) {}
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    ~Lease();
    explicit operator bool() const { return pool_ != nullptr; }
    Transformer& transformer() const { return *pool_->slots_[index_]; }
    int index() const { return index_; }

   private:
    SlotPool* pool_ = nullptr;
    int index_ = -1;
  };

  Lease Acquire();
  // Wakes every waiter with an empty lease and refuses new ones (shutdown).
  void Close();

  TurnTaking& turns() { return turns_; }
  int size() const { return static_cast<int>(slots_.size()); }
  int busy() const;
  int waiting() const;

 private:
  void Return(int index);

  std::vector<std::unique_ptr<Transformer>> slots_;
  const int max_waiting_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::vector<int> free_;
  int waiting_ = 0;
  bool closed_ = false;
  TurnTaking turns_;
};

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_SERVER_SLOT_POOL_H_
