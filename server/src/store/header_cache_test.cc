// HeaderCache: a header is found only for the inode it was kept with; forgetting and the bound.
#include "store/header_cache.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace ais {
namespace {

std::shared_ptr<const ObjectMeta> MetaOfSize(uint64_t size) {
  auto m = std::make_shared<ObjectMeta>();
  m->size = size;
  return m;
}

// The sizes found for `files` of `dir` at inodes `inos`; 0 where none was.
std::vector<uint64_t> Sizes(HeaderCache& cache, const std::string& dir, const std::vector<std::string>& files,
                            const std::vector<uint64_t>& inos) {
  std::vector<std::shared_ptr<const ObjectMeta>> out(files.size());
  std::vector<HeaderCache::Want> wants;
  for (size_t i = 0; i < files.size(); ++i) wants.push_back({.file = files[i], .ino = inos[i], .out = &out[i]});
  cache.Find(dir, wants);
  std::vector<uint64_t> sizes;
  for (const auto& m : out) sizes.push_back(m ? m->size : 0);
  return sizes;
}

TEST(HeaderCacheTest, FoundOnlyForItsInode) {
  HeaderCache cache(100);
  cache.PutPath("/mp/%ob/d/a", 11, MetaOfSize(1));
  std::vector<HeaderCache::Entry> batch = {{.file = "b", .ino = 12, .meta = MetaOfSize(2)}};
  cache.Put("/mp/%ob/d/", batch);
  EXPECT_EQ(Sizes(cache, "/mp/%ob/d/", {"a", "b", "c"}, {11, 12, 13}), (std::vector<uint64_t>{1, 2, 0}));
  EXPECT_EQ(Sizes(cache, "/mp/%ob/d/", {"a", "b"}, {21, 12}), (std::vector<uint64_t>{0, 2}));  // a replaced
  EXPECT_EQ(Sizes(cache, "/mp/%ob/", {"a"}, {11}), (std::vector<uint64_t>{0}));  // another directory
  cache.PutPath("/mp/%ob/d/a", 21, MetaOfSize(3));  // rewritten: the new inode's header
  EXPECT_EQ(Sizes(cache, "/mp/%ob/d/", {"a"}, {21}), (std::vector<uint64_t>{3}));
  EXPECT_EQ(cache.size(), 2u);
}

TEST(HeaderCacheTest, ForgetsFilesAndTrees) {
  HeaderCache cache(100);
  cache.PutPath("/mp/ais/b1/%ob/a", 1, MetaOfSize(1));
  cache.PutPath("/mp/ais/b1/%ob/d/x", 2, MetaOfSize(2));
  cache.PutPath("/mp/ais/b10/%ob/a", 3, MetaOfSize(3));
  cache.ForgetPath("/mp/ais/b1/%ob/a");
  cache.ForgetPath("/mp/ais/b1/%ob/never");
  EXPECT_EQ(Sizes(cache, "/mp/ais/b1/%ob/", {"a"}, {1}), (std::vector<uint64_t>{0}));
  EXPECT_EQ(cache.size(), 2u);
  cache.ForgetUnder("/mp/ais/b1/");
  EXPECT_EQ(Sizes(cache, "/mp/ais/b1/%ob/d/", {"x"}, {2}), (std::vector<uint64_t>{0}));
  EXPECT_EQ(Sizes(cache, "/mp/ais/b10/%ob/", {"a"}, {3}), (std::vector<uint64_t>{3}));  // not under it
  EXPECT_EQ(cache.size(), 1u);
}

TEST(HeaderCacheTest, DropsLeastRecentlyUsedDirectoriesPastItsBound) {
  HeaderCache cache(4);
  cache.PutPath("/old/a", 1, MetaOfSize(1));
  cache.PutPath("/old/b", 2, MetaOfSize(2));
  cache.PutPath("/used/a", 3, MetaOfSize(3));
  cache.PutPath("/used/b", 4, MetaOfSize(4));
  EXPECT_EQ(Sizes(cache, "/old/", {"a"}, {1}), (std::vector<uint64_t>{1}));  // now the most recently used
  cache.PutPath("/new/a", 5, MetaOfSize(5));
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(Sizes(cache, "/used/", {"a", "b"}, {3, 4}), (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(Sizes(cache, "/old/", {"a", "b"}, {1, 2}), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(Sizes(cache, "/new/", {"a"}, {5}), (std::vector<uint64_t>{5}));
}

}  // namespace
}  // namespace ais
