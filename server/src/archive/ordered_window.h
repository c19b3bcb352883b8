// OrderedWindow<T>: prepares items [0, n) on worker threads, concurrently and at most `window`
// items (and about `memory_budget` bytes) ahead of the consumer, and hands them out strictly in
// order. Memory is bounded by the window, never by n.
//
// `prepare(i)` runs on the consumer's thread or a worker's, must not throw, and returns a T with
// `size_t memory() const` (the bytes it holds). Items are claimed in short runs of consecutive
// items to keep the lock traffic low. The consumer prepares items itself: while its item is not
// ready it claims the next run instead of sleeping. Workers (threads of a WorkerPool; fewer if
// it has none to spare) join in only once an item proves slow (a cold disk, a big extraction):
// for small cached items a thread hand-off costs more than the item. Destruction stops the
// workers (each finishes the item in hand) and waits for them.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "archive/worker_pool.h"

namespace ais {

template <typename T>
class OrderedWindow {
 public:
  struct Options {
    size_t window = 64;   // items prepared ahead of the consumer, at most
    size_t workers = 1;   // pool threads besides the consumer
    size_t run = 8;       // items claimed (and handed over) at once
    size_t memory_budget = 16 << 20;  // no claiming while prepared items hold more
    // The workers start once the consumer took longer than this to prepare half the items of
    // a run; zero: at once.
    std::chrono::microseconds slow_item{100};
    WorkerPool* pool = nullptr;       // runs the workers; none: the consumer prepares every item
  };

  OrderedWindow(size_t n, Options opts, std::function<T(size_t)> prepare)
      : n_(n), opts_(Sanitize(opts)), prepare_(std::move(prepare)), slots_(opts_.window) {
    if (opts_.slow_item.count() == 0) StartWorkers();
  }

  ~OrderedWindow() {
    std::unique_lock lock(mu_);
    stopped_ = true;
    work_cv_.notify_all();
    done_cv_.wait(lock, [&] { return workers_ == 0; });
  }

  OrderedWindow(const OrderedWindow&) = delete;
  OrderedWindow& operator=(const OrderedWindow&) = delete;

  // Item i, once prepared. REQUIRES: i is 0 on the first call and one more on each next call.
  T Take(size_t i) {
    std::unique_lock lock(mu_);
    Slot& s = slots_[i % slots_.size()];
    while (!s.value) {
      if (CanClaim()) {
        PrepareRun(lock, true);
        continue;
      }
      consumer_waits_ = true;
      ready_cv_.wait(lock);
    }
    consumer_waits_ = false;
    T out = std::move(*s.value);
    s.value.reset();
    memory_ -= s.memory;
    taken_ = i + 1;
    // Wake idle workers only once a worthwhile stretch is free again.
    bool wake = idle_workers_ > 0 && (claimed_ < n_) &&
                (claimed_ + std::max<size_t>(1, opts_.window / 4) <= taken_ + opts_.window ||
                 memory_ < opts_.memory_budget / 2);
    lock.unlock();
    if (wake) work_cv_.notify_all();
    return out;
  }

 private:
  struct Slot {
    std::optional<T> value;
    size_t memory = 0;
  };

  using Clock = std::chrono::steady_clock;

  // Once, by the constructor or the consumer. REQUIRES: mu_ not held.
  void StartWorkers() {
    helped_ = true;
    if (opts_.pool == nullptr) return;  // no pool: the consumer prepares every item itself
    size_t workers = std::min(opts_.workers, n_ / opts_.run);  // more would find no run the consumer leaves
    for (size_t i = 0; i < workers; ++i) {
      {
        std::lock_guard lock(mu_);
        ++workers_;
      }
      if (!opts_.pool->Run([this] { Work(); })) {
        std::lock_guard lock(mu_);
        --workers_;
        break;
      }
    }
  }

  static Options Sanitize(Options o) {
    o.window = std::max<size_t>(1, o.window);
    o.run = std::clamp<size_t>(o.run, 1, o.window);
    return o;
  }

  // One worker, on a pool thread; the last to leave wakes the destructor.
  void Work() {
    std::unique_lock lock(mu_);
    WorkLocked(lock);
    if (--workers_ == 0) done_cv_.notify_all();
  }

  void WorkLocked(std::unique_lock<std::mutex>& lock) {
    for (;;) {
      while (!stopped_ && !CanClaim()) {
        if (claimed_ >= n_) return;
        ++idle_workers_;
        work_cv_.wait(lock);
        --idle_workers_;
      }
      if (stopped_) return;
      PrepareRun(lock, false);
    }
  }

  // REQUIRES: mu_ held.
  bool CanClaim() const {
    return claimed_ < n_ && claimed_ < taken_ + opts_.window && memory_ < opts_.memory_budget;
  }

  // Claims the next run and prepares it (outside the lock), stopping early once stopped_.
  // REQUIRES: mu_ held, CanClaim().
  void PrepareRun(std::unique_lock<std::mutex>& lock, bool by_consumer) {
    size_t begin = claimed_;
    size_t end = std::min({n_, taken_ + opts_.window, begin + opts_.run});
    claimed_ = end;
    size_t slow = 0;  // items of this run the consumer took longer than slow_item to prepare
    for (size_t i = begin; i < end; ++i) {
      lock.unlock();
      const bool timed = by_consumer && !helped_;
      const Clock::time_point start = timed ? Clock::now() : Clock::time_point();
      T value = prepare_(i);
      // Half a run slow: its items wait on something (a disk), not on a preempted consumer.
      if (timed && Clock::now() - start > opts_.slow_item && ++slow * 2 >= opts_.run) StartWorkers();
      size_t mem = value.memory();
      lock.lock();
      Slot& s = slots_[i % slots_.size()];
      s.value.emplace(std::move(value));
      s.memory = mem;
      memory_ += mem;
      if (stopped_) return;
    }
    // One wake-up per run, not per item: the consumer then takes the run without sleeping.
    if (consumer_waits_ && taken_ >= begin && taken_ < end) ready_cv_.notify_one();
  }

  const size_t n_;
  const Options opts_;
  const std::function<T(size_t)> prepare_;
  std::mutex mu_;
  std::condition_variable ready_cv_;  // the consumer waits for its item
  std::condition_variable work_cv_;   // workers wait for room in the window
  std::condition_variable done_cv_;   // the destructor waits for the workers to leave
  // Guarded by mu_:
  std::vector<Slot> slots_;  // item i lives in slot i % window
  size_t claimed_ = 0;       // items [0, claimed_) are claimed by some worker
  size_t taken_ = 0;         // items [0, taken_) are handed out
  size_t memory_ = 0;        // bytes held by prepared, untaken items
  size_t idle_workers_ = 0;
  bool consumer_waits_ = false;
  bool stopped_ = false;
  size_t workers_ = 0;  // running Work()
  bool helped_ = false;  // StartWorkers() ran; the consumer's own (set before any worker exists)
};

}  // namespace ais
