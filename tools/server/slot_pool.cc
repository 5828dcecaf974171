#include "tools/server/slot_pool.h"

namespace toyllm {

void TurnTaking::Take() {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t ticket = next_ticket_++;
  turn_.wait(lock, [&] { return serving_ == ticket; });
}

void TurnTaking::Release() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++serving_;
  }
  turn_.notify_all();
}

SlotPool::SlotPool(std::vector<std::unique_ptr<Transformer>> slots, int max_waiting)
    : slots_(std::move(slots)), max_waiting_(max_waiting) {
  for (int i = static_cast<int>(slots_.size()) - 1; i >= 0; --i) free_.push_back(i);
}

SlotPool::Lease::Lease(Lease&& other) noexcept : pool_(other.pool_), index_(other.index_) {
  other.pool_ = nullptr;
}

SlotPool::Lease& SlotPool::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    if (pool_ != nullptr) pool_->Return(index_);
    pool_ = other.pool_;
    index_ = other.index_;
    other.pool_ = nullptr;
  }
  return *this;
}

SlotPool::Lease::~Lease() {
  if (pool_ != nullptr) pool_->Return(index_);
}

SlotPool::Lease SlotPool::Acquire() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (closed_) return Lease();
  if (free_.empty()) {
    if (waiting_ >= max_waiting_) return Lease();
    ++waiting_;
    freed_.wait(lock, [&] { return closed_ || !free_.empty(); });
    --waiting_;
    if (closed_) return Lease();
  }
  const int index = free_.back();
  free_.pop_back();
  return Lease(this, index);
}

void SlotPool::Return(int index) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(index);
  }
  freed_.notify_one();
}

void SlotPool::Close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  freed_.notify_all();
}

int SlotPool::busy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return size() - static_cast<int>(free_.size());
}

int SlotPool::waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return waiting_;
}

}  // namespace toyllm
