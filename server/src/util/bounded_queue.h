// BoundedQueue: items handed from one producing thread to several consuming ones, at most `cap`
// waiting (the producer blocks for room). Close() ends it once drained; Stop() ends it at once.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace ais {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t cap) : cap_(cap) {}
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  // Waits for room; false once stopped (the item is dropped).
  bool Push(T item) {
    std::unique_lock lock(mu_);
    room_.wait(lock, [&] { return q_.size() < cap_ || stopped_; });
    if (stopped_) return false;
    q_.push_back(std::move(item));
    ready_.notify_one();
    return true;
  }
  // Queues the item if there is room now; false (the item is dropped) if full or stopped.
  bool TryPush(T item) {
    std::lock_guard lock(mu_);
    if (stopped_ || q_.size() >= cap_) return false;
    q_.push_back(std::move(item));
    ready_.notify_one();
    return true;
  }
  // The next item; nullopt once stopped, or closed and drained.
  std::optional<T> Pop() {
    std::unique_lock lock(mu_);
    ready_.wait(lock, [&] { return !q_.empty() || closed_ || stopped_; });
    if (stopped_ || q_.empty()) return std::nullopt;
    T item = std::move(q_.front());
    q_.pop_front();
    room_.notify_one();
    return item;
  }
  // No more items: consumers take what is queued, then Pop returns nullopt.
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    ready_.notify_all();
  }
  // Ends it now: Push and Pop return at once, what is queued is dropped.
  void Stop() {
    std::lock_guard lock(mu_);
    stopped_ = true;
    ready_.notify_all();
    room_.notify_all();
  }

 private:
  const size_t cap_;
  std::mutex mu_;
  std::condition_variable ready_, room_;
  std::deque<T> q_;        // guarded by mu_
  bool closed_ = false;   // guarded by mu_
  bool stopped_ = false;  // guarded by mu_
};

}  // namespace ais
