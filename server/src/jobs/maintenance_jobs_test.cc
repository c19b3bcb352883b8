// The lru job on a real Store: it evicts only cached objects of remote buckets with lru.enabled,
// never ais:// ones, never one accessed within dont_evict_time, and counts what it evicted.
#include "jobs/maintenance_jobs.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "store/store.h"
#include "util/test_util.h"

namespace ais {
namespace {

class LruJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions opts{{root_.Sub("mp1"), root_.Sub("mp2")}, false};
    opts.lru_min_dont_evict = std::chrono::milliseconds(1000);
    auto s = Store::Open(std::move(opts));
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
    ASSERT_TRUE(store_->CreateBucket("local", nullptr).ok());
    ASSERT_TRUE(store_->CreateBucket("aws/cache", nullptr).ok());
    ASSERT_TRUE(store_->CreateBucket("aws/kept", nlohmann::json::parse(R"({"lru":{"enabled":false}})")).ok());
  }

  void Put(const std::string& bucket, const std::string& name) {
    auto w = store_->BeginPut(bucket, name, PutOptions{});
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_TRUE((*w)->Write("bytes", 5).ok());
    ObjectMeta m;
    ASSERT_TRUE((*w)->Commit(&m).ok());
  }

  bool Has(const std::string& bucket, const std::string& name) { return store_->Head(bucket, name).ok(); }

  // Watermarks so low that whatever the test filesystem holds is above highwm: the job evicts
  // everything it may.
  void EvictAllThatMayGo() {
    SpaceConfig c = store_->capacity().config();
    c.cleanup_wm = c.low_wm = c.high_wm = 1;
    c.dont_evict_time = std::chrono::milliseconds(1000);
    ASSERT_TRUE(store_->capacity().SetConfig(c).ok());
  }

  test::TempDir root_;
  std::unique_ptr<Store> store_;
};

TEST_F(LruJobTest, EvictsOnlyIdleCachedObjectsOfRemoteBucketsWithLru) {
  Put("local", "a");
  Put("aws/cache", "old");
  Put("aws/kept", "old");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  Put("aws/cache", "new");  // within dont_evict_time
  EvictAllThatMayGo();
  if (store_->capacity().Refresh(false).pct_max < 1) GTEST_SKIP() << "the test filesystem is empty";
  JobControl jc;
  ASSERT_TRUE(RunLru(*store_, jc, {}).ok());
  EXPECT_TRUE(Has("local", "a")) << "an ais:// object was evicted";
  EXPECT_TRUE(Has("aws/kept", "old")) << "a bucket with lru.enabled=false was evicted from";
  EXPECT_TRUE(Has("aws/cache", "new")) << "an object within dont_evict_time was evicted";
  EXPECT_FALSE(Has("aws/cache", "old"));
  EXPECT_EQ(store_->capacity().evicted_objects(), 1u);
  EXPECT_EQ(store_->capacity().evicted_bytes(), 5u);
}

TEST_F(LruJobTest, BelowHighWatermarkNothingIsEvicted) {
  Put("aws/cache", "old");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  SpaceConfig c = store_->capacity().config();
  c.high_wm = c.out_of_space = 100;
  c.dont_evict_time = std::chrono::milliseconds(1000);
  ASSERT_TRUE(store_->capacity().SetConfig(c).ok());
  JobControl jc;
  ASSERT_TRUE(RunLru(*store_, jc, {}).ok());
  EXPECT_TRUE(Has("aws/cache", "old"));
}

}  // namespace
}  // namespace ais
