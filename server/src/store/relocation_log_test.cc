#include "store/relocation_log.h"

#include <gtest/gtest.h>

#include <optional>

namespace ais {
namespace {

using Names = std::vector<std::string>;

TEST(RelocationLogTest, AWalkSeesTheMovesThatEndedAfterItBeganAndThoseUnderWay) {
  RelocationLog log;
  { RelocationLog::Move early(log, "b", "early"); }  // ended before the walk: in its directories
  RelocationLog::Walk walk(log, "b");
  { RelocationLog::Move done(log, "b", "m"); }
  std::optional<RelocationLog::Move> moving;
  moving.emplace(log, "b", "x");
  { RelocationLog::Move other(log, "other", "n"); }
  EXPECT_EQ(walk.MovedBetween("", nullptr), (Names{"m", "x"}));
  const std::string hi = "x";
  EXPECT_EQ(walk.MovedBetween("", &hi), Names{"m"});  // below hi only
  EXPECT_EQ(walk.MovedBetween("m", nullptr), Names{"x"});  // above lo only
  moving.reset();
  EXPECT_EQ(walk.MovedBetween("", nullptr), (Names{"m", "x"}));
  RelocationLog::Walk later(log, "b");
  EXPECT_TRUE(later.MovedBetween("", nullptr).empty());
}

TEST(RelocationLogTest, EntriesLastAsLongAsTheOldestWalkThatMayNeedThem) {
  RelocationLog log;
  RelocationLog::Walk first(log, "b");
  { RelocationLog::Move m(log, "b", "m"); }
  std::optional<RelocationLog::Walk> second;
  second.emplace(log, "b");
  { RelocationLog::Move n(log, "b", "n"); }
  { RelocationLog::Move again(log, "b", "n"); }  // moved twice: one name
  EXPECT_EQ(second->MovedBetween("", nullptr), Names{"n"});
  second.reset();  // the pruning it triggers keeps what `first` needs
  { RelocationLog::Move o(log, "b", "o"); }
  EXPECT_EQ(first.MovedBetween("", nullptr), (Names{"m", "n", "o"}));
}

}  // namespace
}  // namespace ais
