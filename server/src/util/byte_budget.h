// ByteBudget: a bound on the bytes that requests hold in memory at once (e.g. request bodies
// buffered whole). A reservation fits whole or is refused at once, never waits: a server under
// more such requests than the budget holds answers some of them "retry later" rather than
// running out of memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <utility>

namespace ais {

class ByteBudget {
 public:
  explicit ByteBudget(uint64_t limit) : limit_(limit) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  // Bytes reserved until the lease is destroyed.
  class Lease {
   public:
    Lease(Lease&& o) noexcept : budget_(std::exchange(o.budget_, nullptr)), bytes_(o.bytes_) {}
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease() {
      if (budget_) budget_->used_.fetch_sub(bytes_, std::memory_order_relaxed);
    }

   private:
    friend class ByteBudget;
    Lease(ByteBudget* b, uint64_t n) : budget_(b), bytes_(n) {}
    ByteBudget* budget_;
    uint64_t bytes_;
  };

  // A lease of `n` bytes, or nothing if they do not fit beside those reserved now.
  std::optional<Lease> TryReserve(uint64_t n) {
    uint64_t used = used_.load(std::memory_order_relaxed);
    do {
      if (n > limit_ || used > limit_ - n) return std::nullopt;
    } while (!used_.compare_exchange_weak(used, used + n, std::memory_order_relaxed));
    return Lease(this, n);
  }

  uint64_t limit() const { return limit_; }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
};

}  // namespace ais
