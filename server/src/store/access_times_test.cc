// AccessTimes: reads recorded in memory, bounded; what it forgets only ever looks older.
#include "store/access_times.h"

#include <gtest/gtest.h>

#include <string>

namespace ais {
namespace {

TEST(AccessTimesTest, KeepsTheLatestRead) {
  AccessTimes t;
  EXPECT_EQ(t.Get("aws/b", "o"), 0);
  t.Touch("aws/b", "o", 100);
  t.Touch("aws/b", "o", 50);  // an older report never moves it back
  EXPECT_EQ(t.Get("aws/b", "o"), 100);
  EXPECT_EQ(t.Get("aws/c", "o"), 0);
  t.Forget("aws/b", "o");
  EXPECT_EQ(t.Get("aws/b", "o"), 0);
}

TEST(AccessTimesTest, BoundedByDroppingTheOldest) {
  AccessTimes t(16 * 64);  // 64 a shard
  for (int i = 0; i < 10000; ++i) t.Touch("b", "o" + std::to_string(i), 1000 + i);
  EXPECT_LE(t.size(), 16u * 65);
  // The most recent reads are all still known; whatever was dropped was older.
  for (int i = 9990; i < 10000; ++i) EXPECT_EQ(t.Get("b", "o" + std::to_string(i)), 1000 + i) << i;
}

}  // namespace
}  // namespace ais
