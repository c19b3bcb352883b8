// HeaderCache: a header is found only for the inode it was kept with; forgetting, the bound, and
// the snapshot a stopping server leaves for its next start.
#include "store/header_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "util/file.h"
#include "util/test_util.h"

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

// Sets the directory's mtime one second back: a change of it, whatever the clock's granularity.
void MoveMtimeBack(const std::string& dir) {
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  timespec times[2] = {st.st_atim, st.st_mtim};
  times[1].tv_sec -= 1;
  ASSERT_EQ(::utimensat(AT_FDCWD, dir.c_str(), times, 0), 0);
}

TEST(HeaderCacheTest, SnapshotKeepsTheDirectoriesThatStayedTheSame) {
  test::TempDir root;
  for (const char* d : {"mp/a", "mp/b", "mp/fresh", "other/c"}) std::filesystem::create_directories(root.Sub(d));
  const std::string mp = root.Sub("mp/"), a = root.Sub("mp/a/"), b = root.Sub("mp/b/"), c = root.Sub("other/c/");
  const std::string fresh = root.Sub("mp/fresh/");
  for (const std::string& d : {a, b, c}) MoveMtimeBack(d);  // settled; `fresh` was just made
  const std::string file = root.Sub("mp/.ais.headers");
  {
    HeaderCache cache(100);
    cache.PutPath(a + "x", 11, MetaOfSize(1));
    auto chunked = std::make_shared<ObjectMeta>();
    chunked->size = 5;
    chunked->upload_id = "u1";
    chunked->chunk_sizes = {2, 3};
    chunked->custom = {{"k", "v"}};
    cache.PutPath(a + "y", 12, chunked);
    cache.PutPath(b + "z", 13, MetaOfSize(3));
    cache.PutPath(c + "w", 14, MetaOfSize(4));  // not under the mountpath saved
    cache.PutPath(fresh + "f", 15, MetaOfSize(5));
    const uint64_t changes = cache.changes();
    EXPECT_EQ(changes, 5u);  // every Put counts: a periodic save compares counts
    size_t unsettled = 0;
    ASSERT_TRUE(cache.Save(mp, file, HeaderCache::kSettleNs, &unsettled).ok());
    EXPECT_EQ(unsettled, 1u);  // `fresh`: a periodic save then tries again
    EXPECT_EQ(cache.changes(), changes);
  }
  MoveMtimeBack(b);  // b changed while the server was down

  HeaderCache cache(100);
  auto kept = cache.Load(file);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_EQ(*kept, 2u);
  EXPECT_FALSE(std::filesystem::exists(file));  // good for one start
  EXPECT_EQ(Sizes(cache, a, {"x", "y"}, {11, 12}), (std::vector<uint64_t>{1, 5}));
  EXPECT_EQ(Sizes(cache, a, {"x"}, {21}), (std::vector<uint64_t>{0}));  // still by inode
  EXPECT_EQ(Sizes(cache, b, {"z"}, {13}), (std::vector<uint64_t>{0}));
  EXPECT_EQ(Sizes(cache, c, {"w"}, {14}), (std::vector<uint64_t>{0}));
  EXPECT_EQ(Sizes(cache, fresh, {"f"}, {15}), (std::vector<uint64_t>{0}));  // not settled at the Save
  EXPECT_EQ(cache.size(), 2u);
  std::shared_ptr<const ObjectMeta> y;
  std::vector<HeaderCache::Want> want = {{.file = "y", .ino = 12, .out = &y}};
  cache.Find(a, want);
  ASSERT_TRUE(y);
  EXPECT_EQ(y->upload_id, "u1");
  EXPECT_EQ(y->chunk_sizes, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(y->custom, (std::vector<std::pair<std::string, std::string>>{{"k", "v"}}));
  kept = cache.Load(file);  // none: nothing to do
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, 0u);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(HeaderCacheTest, DamagedSnapshotIsRemovedUnused) {
  test::TempDir root;
  std::filesystem::create_directories(root.Sub("mp/a"));
  MoveMtimeBack(root.Sub("mp/a"));
  const std::string file = root.Sub("mp/.ais.headers");
  HeaderCache saved(100);
  for (uint64_t i = 1; i <= 20; ++i) saved.PutPath(root.Sub("mp/a/o") + std::to_string(i), i, MetaOfSize(i));
  ASSERT_TRUE(saved.Save(root.Sub("mp/"), file).ok());
  auto whole = ReadFile(file);
  ASSERT_TRUE(whole.ok());
  ASSERT_GT(whole->size(), 20 * 16u);  // the headers are in it

  std::string flipped = *whole;
  flipped[flipped.size() / 2] ^= 0x20;
  std::string truncated = whole->substr(0, whole->size() - 9);
  for (const std::string& bad : {flipped, truncated, std::string("AISHDRS1"), std::string("not a snapshot")}) {
    ASSERT_TRUE(AtomicWriteFile(file, bad, false).ok());
    HeaderCache cache(100);
    Status st = cache.Load(file).status();
    EXPECT_EQ(st.code(), Status::Code::kCorruption) << st.message();
    EXPECT_FALSE(std::filesystem::exists(file));
    EXPECT_EQ(cache.size(), 0u);
  }
}

}  // namespace
}  // namespace ais
