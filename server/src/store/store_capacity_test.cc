// The store's side of capacity: eviction that keeps what was read or changed since it was chosen,
// a reader's bytes surviving its object's eviction, reads recorded without a write, writes
// refused above out_of_space, and the space cleanup of deleted buckets' leftovers.
#include <gtest/gtest.h>

#include <utime.h>

#include "store/store_fixture.h"
#include "util/clock.h"

namespace ais::store_test {
namespace {

namespace fs = std::filesystem;

TEST_F(StoreTest, EvictKeepsWhatWasReadOrChangedSinceItWasChosen) {
  const std::string data = Bytes(9000, 7);  // chunked in "chunky"
  auto put = Put("chunky", "o", data);
  ASSERT_TRUE(put.ok());
  const int64_t seen = store_->AccessTime("chunky", *put);
  EXPECT_EQ(seen, put->atime_ns);  // never read yet: its write
  uint64_t bytes = 0;
  EXPECT_EQ(store_->Evict("chunky", "o", put->version + 1, seen, &bytes).code(), Status::Code::kConflict);
  auto h = store_->Open("chunky", "o");  // a read: recorded in memory only
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(store_->Head("chunky", "o")->atime_ns, put->atime_ns) << "a read wrote the header";
  EXPECT_GT(store_->AccessTime("chunky", *put), seen);
  EXPECT_EQ(store_->Evict("chunky", "o", put->version, seen, &bytes).code(), Status::Code::kConflict);
  ASSERT_TRUE(h->OpenAll().ok());  // the reader holds every file
  ASSERT_TRUE(store_->Evict("chunky", "o", put->version, NowNs(), &bytes).ok());
  EXPECT_EQ(bytes, data.size());
  EXPECT_TRUE(store_->Head("chunky", "o").status().IsNotFound());
  std::string got(data.size(), '\0');
  ASSERT_TRUE(h->ReadAt(0, got.data(), got.size()).ok());
  EXPECT_TRUE(SameBytes(got, data)) << "the reader's bytes changed under eviction";
}

TEST_F(StoreTest, WritesAreRefusedAboveOutOfSpace) {
  SpaceConfig c = store_->capacity().config();
  c.cleanup_wm = c.low_wm = c.high_wm = c.out_of_space = 0;
  EXPECT_FALSE(store_->capacity().SetConfig(c).ok());  // cleanupwm must be > 0
  const CapStatus cs = store_->capacity().Refresh();
  ASSERT_FALSE(cs.mountpaths.empty());
  if (cs.pct_max < 1) GTEST_SKIP() << "the test filesystem is empty: nothing is above any watermark";
  c.cleanup_wm = c.low_wm = c.high_wm = c.out_of_space = 1;  // anything used at all is too much
  ASSERT_TRUE(store_->capacity().SetConfig(c).ok());
  auto w = store_->BeginPut("plain", "refused", PutOptions{});
  ASSERT_EQ(w.status().code(), Status::Code::kNoSpace);
  EXPECT_NE(w.status().message().find("out of space: used "), std::string::npos) << w.status().message();
  c.out_of_space = 100;
  ASSERT_TRUE(store_->capacity().SetConfig(c).ok());
  EXPECT_TRUE(Put("plain", "accepted", "x").ok());
}

TEST_F(StoreTest, SpaceCleanupRemovesDeletedBucketsLeftovers) {
  ASSERT_TRUE(Put("plain", "kept", "x").ok());
  const std::string mp = store_->mountpaths().paths()[0];
  const std::string ghost = mp + "/ais/ghost/%ob", fresh = mp + "/ais/fresh/%ob";
  const std::string trash = store_->mountpaths().WorkDir(0) + "/trash-abcdefabcdef";
  for (const auto& d : {ghost, fresh, trash}) fs::create_directories(d);
  std::ofstream(ghost + "/obj") << "left behind";
  std::ofstream(trash + "/obj") << "left behind too";
  struct utimbuf old{};
  old.actime = old.modtime = ::time(nullptr) - 3600;
  for (const auto& d : {mp + "/ais/ghost", trash, mp + "/ais/plain"}) ASSERT_EQ(::utime(d.c_str(), &old), 0) << d;
  size_t n = 0;
  uint64_t bytes = 0;
  ASSERT_TRUE(store_->RemoveLeftovers(std::chrono::minutes(30), [] { return false; }, [&](uint64_t b) {
    ++n;
    bytes += b;
  }).ok());
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(bytes, std::string("left behind").size() + std::string("left behind too").size());
  EXPECT_FALSE(fs::exists(mp + "/ais/ghost"));
  EXPECT_FALSE(fs::exists(trash));
  EXPECT_TRUE(fs::exists(fresh)) << "a directory this young may be a bucket being created";
  ExpectObject("plain", "kept", "x");
}

TEST_F(StoreTest, SpaceCleanupRemovesOnlyUnreferencedUnguardedChunks) {
  const std::string data = Bytes(9000, 9);  // chunked in "chunky"
  ASSERT_TRUE(Put("chunky", "kept", data).ok());
  PutOptions opts;
  opts.size = 9000;
  auto inflight = store_->BeginPut("chunky", "inflight", opts);  // marked: being written
  ASSERT_TRUE(inflight.ok());
  ASSERT_TRUE((*inflight)->Write(data.data(), 3000).ok());
  const std::string orphan = store_->mountpaths().ChunkDir(0, "chunky", "orphanupload");
  fs::create_directories(orphan);
  std::ofstream(orphan + "/0001") << "orphaned chunk";
  // Everything is made old: only the age guard's absence is tested here, not its presence.
  struct utimbuf old{};
  old.actime = old.modtime = ::time(nullptr) - 3600;
  for (size_t mp = 0; mp < store_->mountpaths().size(); ++mp) {
    const std::string ch = store_->mountpaths().BucketDir(mp, "chunky") + "/%ch";
    if (!fs::exists(ch)) continue;
    for (const auto& e : fs::directory_iterator(ch)) ASSERT_EQ(::utime(e.path().c_str(), &old), 0);
  }
  size_t n = 0;
  ASSERT_TRUE(store_->RemoveOrphanedChunks(std::chrono::minutes(30), [] { return false; }, [&](uint64_t) {
    ++n;
  }).ok());
  EXPECT_EQ(n, 1u);
  EXPECT_FALSE(fs::exists(orphan));
  ExpectObject("chunky", "kept", data);
  ASSERT_TRUE((*inflight)->Write(data.data() + 3000, 6000).ok());
  ObjectMeta m;
  ASSERT_TRUE((*inflight)->Commit(&m).ok()) << "an upload in flight lost its chunks";
  ExpectObject("chunky", "inflight", data);
}

}  // namespace
}  // namespace ais::store_test
