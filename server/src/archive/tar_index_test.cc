// The tar index cache: budget and recency, identity, and shards that find their index across
// requests but never a stale one.
#include "archive/tar_index.h"

#include <gtest/gtest.h>

#include "archive/archive_test_util.h"
#include "archive/tar_shard.h"
#include "util/test_util.h"

namespace ais {
namespace {

std::shared_ptr<const TarIndex> IndexOf(size_t members) {
  auto idx = std::make_shared<TarIndex>();
  for (size_t i = 0; i < members; ++i) {
    idx->by_key.emplace("m" + std::to_string(i), i);
    idx->members.push_back({.name = "m" + std::to_string(i), .size = i, .offset = i * 512});
  }
  return idx;
}

TEST(TarIndexCache, KeepsTheMostRecentWithinItsBudget) {
  const size_t one = IndexOf(100)->bytes() + 8;
  TarIndexCache cache(one * 2 + one / 2);  // room for two
  const TarIndexCache::Identity v1{.version = 1, .size = 10};
  cache.Put("b/o1", v1, IndexOf(100));
  cache.Put("b/o2", v1, IndexOf(100));
  EXPECT_NE(cache.Get("b/o1", v1), nullptr);  // o1 is now the most recent
  cache.Put("b/o3", v1, IndexOf(100));          // o2 goes
  EXPECT_EQ(cache.Get("b/o2", v1), nullptr);
  EXPECT_NE(cache.Get("b/o1", v1), nullptr);
  EXPECT_NE(cache.Get("b/o3", v1), nullptr);
  EXPECT_LE(cache.bytes(), one * 2 + one / 2);
  // Another version of the object does not match; a newer Put replaces the entry.
  const TarIndexCache::Identity v2{.version = 2, .size = 10};
  EXPECT_EQ(cache.Get("b/o1", v2), nullptr);
  cache.Put("b/o1", v2, IndexOf(3));
  EXPECT_EQ(cache.Get("b/o1", v1), nullptr);
  EXPECT_EQ(cache.Get("b/o1", v2)->members.size(), 3u);
  // An index larger than the whole budget is not kept.
  cache.Put("b/big", v1, IndexOf(1000));
  EXPECT_EQ(cache.Get("b/big", v1), nullptr);
}

TEST(TarShard, IndexIsSharedAcrossOpensAndNeverStale) {
  test::TempDir root;
  auto s = Store::Open(StoreOptions{.mountpaths = {root.Sub("mp1"), root.Sub("mp2")}});
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto& store = **s;
  ASSERT_TRUE(store.CreateBucket("idx", nullptr).ok());
  auto open = [&] {
    auto obj = store.OpenShared("idx", "s.tar");
    EXPECT_TRUE(obj.ok());
    return std::make_shared<TarShard>(*obj);
  };
  test::PutObject(store, "idx", "s.tar", test::BuildArchive(ArchiveFormat::kTar, {{"x", "first"}, {"y", "second"}}));
  auto first = open();
  ASSERT_TRUE(first->Find("y").ok());
  auto obj = store.OpenShared("idx", "s.tar");
  ASSERT_TRUE(obj.ok());
  auto cached = SharedTarIndexes().Get(std::string("idx") + '\0' + "s.tar", TarIndexCache::Identity::Of((*obj)->meta()));
  ASSERT_NE(cached, nullptr);  // the first lookup indexed the whole shard and shared it
  EXPECT_EQ(cached->members.size(), 2u);
  // Overwritten: a new open sees the new members only.
  test::PutObject(store, "idx", "s.tar", test::BuildArchive(ArchiveFormat::kTar, {{"z", "third"}}));
  auto second = open();
  EXPECT_TRUE(second->Find("z").ok());
  EXPECT_TRUE(second->Find("x").status().IsNotFound());
  // The shard opened before the overwrite keeps reading its own version's index.
  EXPECT_TRUE(first->Find("x").ok());
}

}  // namespace
}  // namespace ais
