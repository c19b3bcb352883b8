// ByteBudget: reservations fit whole or are refused, and come back when their lease goes.
#include "util/byte_budget.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace ais {
namespace {

TEST(ByteBudgetTest, ReservesWhileLeasesLive) {
  ByteBudget b(100);
  auto a = b.TryReserve(60);
  ASSERT_TRUE(a);
  EXPECT_FALSE(b.TryReserve(41));  // 60 + 41 > 100
  {
    auto c = b.TryReserve(40);
    ASSERT_TRUE(c);
    EXPECT_EQ(b.used(), 100u);
    EXPECT_FALSE(b.TryReserve(1));
  }
  EXPECT_EQ(b.used(), 60u);
  EXPECT_FALSE(b.TryReserve(101));  // never fits
  EXPECT_FALSE(b.TryReserve(UINT64_MAX));
  auto moved = std::move(*a);
  a.reset();  // the moved-from lease returns nothing
  EXPECT_EQ(b.used(), 60u);
}

TEST(ByteBudgetTest, ConcurrentReservationsNeverExceedTheLimit) {
  ByteBudget b(1000);
  std::atomic<uint64_t> peak{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        if (auto l = b.TryReserve(300)) {
          uint64_t u = b.used();
          uint64_t p = peak.load();
          while (u > p && !peak.compare_exchange_weak(p, u)) {
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(peak.load(), 1000u);
  EXPECT_GE(peak.load(), 300u);
  EXPECT_EQ(b.used(), 0u);
}

}  // namespace
}  // namespace ais
