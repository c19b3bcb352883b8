#include "util/bounded_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace ais {
namespace {

TEST(BoundedQueueTest, CloseDrainsWhatIsQueued) {
  BoundedQueue<std::string> q(4);
  ASSERT_TRUE(q.Push("a"));
  ASSERT_TRUE(q.Push("b"));
  q.Close();
  EXPECT_EQ(q.Pop(), "a");
  EXPECT_EQ(q.Pop(), "b");
  EXPECT_EQ(q.Pop(), std::nullopt);
}

TEST(BoundedQueueTest, StopDropsTheRestAndFreesABlockedProducer) {
  BoundedQueue<int> q(1);
  ASSERT_TRUE(q.Push(1));
  std::atomic<int> pushed{-1};
  std::thread producer([&] { pushed = q.Push(2) ? 1 : 0; });  // waits for room
  q.Stop();
  producer.join();
  EXPECT_EQ(pushed.load(), 0);
  EXPECT_EQ(q.Pop(), std::nullopt);
  EXPECT_FALSE(q.Push(3));
}

TEST(BoundedQueueTest, EveryItemReachesOneConsumerInOrderOfPush) {
  BoundedQueue<int> q(3);
  constexpr int kItems = 10000;
  std::vector<int> seen(kItems, 0);
  std::vector<std::thread> consumers;
  for (int c = 0; c < 4; ++c) {
    consumers.emplace_back([&] {
      int last = -1;
      while (auto v = q.Pop()) {
        EXPECT_GT(*v, last);  // one producer: each consumer sees a rising sequence
        last = *v;
        ++seen[static_cast<size_t>(*v)];
      }
    });
  }
  for (int i = 0; i < kItems; ++i) ASSERT_TRUE(q.Push(i));
  q.Close();
  for (auto& t : consumers) t.join();
  for (int n : seen) ASSERT_EQ(n, 1);
}

}  // namespace
}  // namespace ais
