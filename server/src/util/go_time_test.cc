#include "util/go_time.h"

#include <gtest/gtest.h>

namespace ais {
namespace {

TEST(GoTimeTest, AsGoMarshalsATime) {
  EXPECT_EQ(GoTimeText(0), "0001-01-01T00:00:00Z");  // Go's zero time
  EXPECT_EQ(GoTimeText(1'700'000'000'000'000'000), "2023-11-14T22:13:20Z");
  EXPECT_EQ(GoTimeText(1'700'000'000'120'000'000), "2023-11-14T22:13:20.12Z");
  EXPECT_EQ(GoTimeText(1'700'000'000'000'000'001), "2023-11-14T22:13:20.000000001Z");
}

}  // namespace
}  // namespace ais
