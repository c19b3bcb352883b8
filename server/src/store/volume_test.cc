// Volume through the Store: objects found off their primary mountpath, the node's identity.
#include <gtest/gtest.h>

#include "store/store_fixture.h"

namespace ais::store_test {
namespace {

namespace fs = std::filesystem;

// Lookups skip the other mountpaths while every object is on its primary; anything that may
// put one elsewhere (a disabled mountpath, a changed set of mountpaths, data without a state
// file) turns the probes back on, and stays on across restarts.
TEST_F(StoreTest, ObjectsOffTheirPrimaryAreFoundAfterTheMountpathsChange) {
  constexpr int kObjects = 40;
  for (int i = 0; i < kObjects; ++i) ASSERT_TRUE(Put("plain", "o" + std::to_string(i), Bytes(100, i)).ok());
  paths_.push_back(root_.Sub("mp5"));  // a fifth disk: HRW ranks ~1/5 of the names to it
  Reopen();
  size_t moved = 0;
  for (int i = 0; i < kObjects; ++i) {
    std::string name = "o" + std::to_string(i);
    ExpectObject("plain", name, Bytes(100, i));
    if (store_->mountpaths().PrimaryFor("plain", name) == 4) ++moved;
    // An overwrite finds the old version (wherever it is) and replaces it: one copy stays.
    auto meta = Put("plain", name, Bytes(50, i + 1000));
    ASSERT_TRUE(meta.ok());
    EXPECT_EQ(meta->version, 2u) << name;
  }
  EXPECT_GT(moved, 0u);
  EXPECT_EQ(ListNames("plain", ListQuery{}).size(), static_cast<size_t>(kObjects));
  Reopen();  // still probing after a restart with the same five
  for (int i = 0; i < kObjects; ++i) ExpectObject("plain", "o" + std::to_string(i), Bytes(50, i + 1000));
}

TEST_F(StoreTest, AStoreThatNeverPlacedAnObjectElsewhereLooksOnlyAtPrimaries) {
  ASSERT_TRUE(Put("plain", "x", "bytes").ok());
  const Mountpaths& mps = store_->mountpaths();
  size_t primary = mps.PrimaryFor("plain", "x");
  size_t other = (primary + 1) % mps.size();
  // The file moved by hand to another mountpath: not where this store ever puts it.
  std::string from = mps.ObjectPath(primary, "plain", "x"), to = mps.ObjectPath(other, "plain", "x");
  fs::create_directories(fs::path(to).parent_path());
  fs::rename(from, to);
  EXPECT_TRUE(store_->Open("plain", "x").status().IsNotFound());
  // Once a mountpath was disabled, lookups probe them all (and keep doing so).
  ASSERT_TRUE(store_->DisableMountpath(paths_[(other + 1) % mps.size()], "test").ok());
  ASSERT_TRUE(store_->EnableMountpath(paths_[(other + 1) % mps.size()]).ok());
  ExpectObject("plain", "x", "bytes");
  Reopen();
  ExpectObject("plain", "x", "bytes");
}

TEST_F(StoreTest, ObjectsWrittenWhileAMountpathWasDisabledAreFound) {
  ASSERT_TRUE(store_->DisableMountpath(paths_[0], "test").ok());
  constexpr int kObjects = 40;
  for (int i = 0; i < kObjects; ++i) ASSERT_TRUE(Put("plain", "d" + std::to_string(i), Bytes(100, i)).ok());
  ASSERT_TRUE(store_->EnableMountpath(paths_[0]).ok());
  for (int restart = 0; restart < 2; ++restart) {
    for (int i = 0; i < kObjects; ++i) ExpectObject("plain", "d" + std::to_string(i), Bytes(100, i));
    Reopen();
  }
}

TEST_F(StoreTest, DataWithoutAStateFileIsProbedForEverywhere) {
  constexpr int kObjects = 40;
  for (int i = 0; i < kObjects; ++i) ASSERT_TRUE(Put("plain", "s" + std::to_string(i), Bytes(100, i)).ok());
  store_.reset();
  for (const auto& p : paths_) fs::remove(p + "/.ais.vmd.json");
  paths_.push_back(root_.Sub("mp5"));
  Reopen();
  for (int i = 0; i < kObjects; ++i) ExpectObject("plain", "s" + std::to_string(i), Bytes(100, i));
}


TEST_F(StoreTest, NodeIdentityPersistsAcrossRestarts) {
  const std::string uuid = store_->cluster_uuid(), id = store_->daemon_id();
  EXPECT_EQ(uuid.size(), 10u);
  EXPECT_EQ(id.size(), 8u);
  Reopen();
  EXPECT_EQ(store_->cluster_uuid(), uuid);
  EXPECT_EQ(store_->daemon_id(), id);
}

}  // namespace
}  // namespace ais::store_test
