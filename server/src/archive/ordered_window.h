// OrderedWindow<T>: prepares items [0, n) on worker threads, concurrently and at most `window`
// items (and about `memory_budget` bytes) ahead of the consumer, and hands them out strictly in
// order. Memory is bounded by the window, never by n.
//
// `prepare(i)` runs on a worker thread, must not throw, and returns a T with `size_t memory()
// const` (the bytes it holds). Workers claim short runs of consecutive items to keep the lock
// traffic low. They run on a WorkerPool; if it has no thread to spare, the consumer prepares
// each item itself. Destruction stops the workers (each finishes the item in hand) and waits
// for them.
#pragma once

#include <algorithm>
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
    size_t workers = 2;
    size_t run = 8;       // items a worker claims (and hands over) at once
    size_t memory_budget = 16 << 20;  // workers stop claiming while prepared items hold more
    WorkerPool* pool = nullptr;       // nullptr: WorkerPool::Shared()
  };

  OrderedWindow(size_t n, Options opts, std::function<T(size_t)> prepare)
      : n_(n), opts_(Sanitize(opts)), prepare_(std::move(prepare)), slots_(opts_.window) {
    WorkerPool& pool = opts_.pool ? *opts_.pool : WorkerPool::Shared();
    size_t workers = std::min(opts_.workers, n_);
    for (size_t i = 0; i < workers; ++i) {
      {
        std::lock_guard lock(mu_);
        ++workers_;
      }
      if (!pool.Run([this] { Work(); })) {
        std::lock_guard lock(mu_);
        --workers_;
        break;
      }
    }
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
      if (workers_ == 0 && claimed_ == i) {  // no worker (the pool was full): prepare it here
        claimed_ = i + 1;
        lock.unlock();
        T value = prepare_(i);
        lock.lock();
        s.value.emplace(std::move(value));
        break;
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

  static Options Sanitize(Options o) {
    o.window = std::max<size_t>(1, o.window);
    o.workers = std::max<size_t>(1, o.workers);
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
      while (!stopped_ && !(claimed_ < n_ && claimed_ < taken_ + opts_.window && memory_ < opts_.memory_budget)) {
        if (claimed_ >= n_) return;
        ++idle_workers_;
        work_cv_.wait(lock);
        --idle_workers_;
      }
      if (stopped_) return;
      size_t begin = claimed_;
      size_t end = std::min({n_, taken_ + opts_.window, begin + opts_.run});
      claimed_ = end;
      for (size_t i = begin; i < end; ++i) {
        lock.unlock();
        T value = prepare_(i);
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
};

}  // namespace ais
