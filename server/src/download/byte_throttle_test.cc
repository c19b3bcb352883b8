#include "download/byte_throttle.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace ais {
namespace {

using std::chrono::milliseconds;

TEST(ByteThrottleTest, ABudgetPerPeriodNeverMore) {
  ByteThrottle t(60 * 1000, milliseconds(200));  // 1000 bytes per period
  auto never = [] { return false; };
  EXPECT_EQ(t.Acquire(600, never), 600);
  EXPECT_EQ(t.Acquire(600, never), 400);  // what is left, not more
  const auto t0 = ByteThrottle::Clock::now();
  EXPECT_EQ(t.Acquire(10, never), 10);  // waited for the next period
  EXPECT_GE(ByteThrottle::Clock::now() - t0, milliseconds(150));
}

TEST(ByteThrottleTest, StopEndsTheWait) {
  ByteThrottle t(60, std::chrono::hours(1));  // 1 byte an hour
  std::atomic<bool> stop{false};
  EXPECT_EQ(t.Acquire(5, [] { return false; }), 1);
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(50));
    stop = true;
    t.Wake();
  });
  const auto t0 = ByteThrottle::Clock::now();
  EXPECT_EQ(t.Acquire(5, [&] { return stop.load(); }), 0);
  EXPECT_LT(ByteThrottle::Clock::now() - t0, milliseconds(1000));
  stopper.join();
}

}  // namespace
}  // namespace ais
