// ByteThrottle: a download job's `limits.bytes_per_hour`, enforced as AIS's throttler does: a
// budget of bytes_per_hour/60 bytes each minute, shared by the job's connections; a reader that
// finds it spent waits for the next minute. Thread-safe.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

namespace ais {

class ByteThrottle {
 public:
  using Clock = std::chrono::steady_clock;
  // REQUIRES: bytes_per_hour > 0. `period`: the refill period (a minute; shorter in tests).
  explicit ByteThrottle(int64_t bytes_per_hour, Clock::duration period = std::chrono::minutes(1))
      : per_period_(std::max<int64_t>(1, bytes_per_hour / 60)), period_(period), refill_at_(Clock::now() + period),
        left_(per_period_) {}

  // Takes up to `want` bytes of budget, waiting for a refill while none is left; returns how many
  // it took (>= 1), or 0 once `stop()` is true (checked at least every 100 ms).
  int64_t Acquire(int64_t want, const std::function<bool()>& stop) {
    std::unique_lock lock(mu_);
    while (true) {
      Refill(Clock::now());
      if (left_ > 0) {
        int64_t got = std::min(want, left_);
        left_ -= got;
        return got;
      }
      if (stop()) return 0;
      cv_.wait_until(lock, std::min(refill_at_, Clock::now() + std::chrono::milliseconds(100)));
    }
  }
  // Wakes waiters so that they look at their stop condition now.
  void Wake() { cv_.notify_all(); }

 private:
  void Refill(Clock::time_point now) {  // REQUIRES: mu_ held
    if (now < refill_at_) return;
    left_ = per_period_;  // a minute's budget not spent is not carried over
    refill_at_ = now + period_;
  }

  const int64_t per_period_;
  const Clock::duration period_;
  std::mutex mu_;
  std::condition_variable cv_;
  Clock::time_point refill_at_;  // guarded by mu_
  int64_t left_;                 // guarded by mu_
};

}  // namespace ais
