// The lru job's choice: least recently accessed first, never what was accessed within
// dont_evict_time, only where a filesystem is above highwm, and down to lowwm.
#include "jobs/eviction_plan.h"

#include <gtest/gtest.h>

#include <string>

namespace ais {
namespace {

constexpr int64_t kSec = 1000000000;
constexpr int64_t kNow = 1000000 * kSec;
constexpr uint64_t kMiB = 1 << 20;

// Two mountpaths on their own filesystems of 100 MiB: mp 0 at `pct0` used, mp 1 at `pct1`.
CapStatus TwoMountpaths(int32_t pct0, int32_t pct1) {
  CapStatus cs;
  for (size_t mp = 0; mp < 2; ++mp) {
    MountpathCapacity c;
    c.mp = mp;
    c.fsid = 10 + mp;
    c.pct_used = mp == 0 ? pct0 : pct1;
    c.blocks_total = 100 * kMiB;
    c.used = static_cast<uint64_t>(c.pct_used) * kMiB;
    c.avail = c.blocks_total - c.used;
    cs.mountpaths.push_back(c);
  }
  return cs;
}

SpaceConfig Config() {
  SpaceConfig c;  // low 75, high 90
  c.dont_evict_time = std::chrono::seconds(60);
  return c;
}

EvictionCandidate Obj(const std::string& name, int64_t age_s, size_t mp, uint64_t size = kMiB) {
  return {.bucket = "aws/b", .name = name, .version = 1, .atime_ns = kNow - age_s * kSec, .size = size,
          .bytes_on = {{mp, size}}};
}

TEST(EvictionPlanTest, LeastRecentlyUsedFirstDownToLowWatermark) {
  EvictionPlan plan(TwoMountpaths(95, 50), Config(), 2, kNow, 1000);
  ASSERT_TRUE(plan.Needed());
  EXPECT_EQ(plan.bytes_needed(), 20 * kMiB);  // 95 -> 75 on mp 0; mp 1 is below highwm
  for (int i = 0; i < 40; ++i) plan.Offer(Obj("o" + std::to_string(i), 100 + (i * 7919) % 40 * 10, 0));
  plan.Offer(Obj("on-mp1", 100000, 1));  // the oldest, but its filesystem needs nothing
  plan.Offer(Obj("recent", 30, 0));      // within dont_evict_time
  auto order = plan.TakeOldestFirst();
  ASSERT_EQ(order.size(), 40u);
  for (size_t i = 1; i < order.size(); ++i) EXPECT_LE(order[i - 1].atime_ns, order[i].atime_ns);
  size_t evicted = 0;
  for (const auto& c : order) {
    if (!plan.Helps(c)) break;
    plan.Evicted(c);
    ++evicted;
  }
  EXPECT_EQ(evicted, 20u);  // exactly the 20 MiB above lowwm, the oldest 20
  EXPECT_FALSE(plan.Needed());
}

TEST(EvictionPlanTest, NothingBelowHighWatermark) {
  EvictionPlan plan(TwoMountpaths(89, 10), Config(), 2, kNow, 1000);
  EXPECT_FALSE(plan.Needed());
  plan.Offer(Obj("old", 100000, 0));
  EXPECT_TRUE(plan.TakeOldestFirst().empty());
}

TEST(EvictionPlanTest, BoundedKeepsTheOldestAndSaysSo) {
  EvictionPlan plan(TwoMountpaths(100, 100), Config(), 2, kNow, 5);
  for (int i = 0; i < 50; ++i) plan.Offer(Obj("o" + std::to_string(i), 1000 + i, i % 2));
  EXPECT_TRUE(plan.truncated());
  auto order = plan.TakeOldestFirst();
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order[0].name, "o49");  // age 1049 s: the oldest
  EXPECT_EQ(order[4].name, "o45");
}

TEST(EvictionPlanTest, SharedFilesystemCountsOnce) {
  CapStatus cs = TwoMountpaths(95, 95);
  cs.mountpaths[1].fsid = cs.mountpaths[0].fsid;  // both mountpaths on one filesystem
  cs.mountpaths[1].shared = true;
  EvictionPlan plan(cs, Config(), 2, kNow, 100);
  EXPECT_EQ(plan.bytes_needed(), 20 * kMiB);
  plan.Evicted(Obj("a", 1000, 1, 15 * kMiB));  // bytes on mp 1 free the shared filesystem
  EXPECT_EQ(plan.bytes_needed(), 5 * kMiB);
}

TEST(EvictionPlanTest, ChunkedObjectHelpsWhereItsChunksAre) {
  EvictionPlan plan(TwoMountpaths(50, 95), Config(), 2, kNow, 100);
  EvictionCandidate c = Obj("chunked", 1000, 0, 4 * kMiB);
  c.bytes_on = {{0, 4096}, {1, 4 * kMiB}};  // its header on mp 0, its chunk on mp 1
  EXPECT_TRUE(plan.Helps(c));
  plan.Evicted(c);
  EXPECT_EQ(plan.bytes_needed(), 16 * kMiB);
}

}  // namespace
}  // namespace ais
