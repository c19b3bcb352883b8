// List-objects flags of rest-core.md §9 on ais:// buckets: LsNoRecursion (AIS cmn.CheckDirNoRecurs,
// xact/xs/lso.go), LsNoDirs, LsNameOnly, LsNameSize, and how their entries are encoded.
#include "api/object_list.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <msgpack.hpp>
#include <set>
#include <string>
#include <vector>

namespace ais {
namespace {

constexpr uint16_t kInArch = 128;

ObjectMeta Meta(const std::string& name, uint64_t size = 1) {
  ObjectMeta m;
  m.name = name;
  m.size = size;
  return m;
}

ObjectMeta FullMeta() {
  ObjectMeta m = Meta("o", 5);
  m.version = 2;
  m.cksum_type = "xxhash";
  m.cksum_value = "ab";
  return m;
}

// A bucket as the store lists it: names in order, a file inside an archive right after it.
class FakeBucket {
 public:
  explicit FakeBucket(std::vector<ListEntry> entries) : entries_(std::move(entries)) {}
  static FakeBucket Of(std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    std::vector<ListEntry> entries;
    for (auto& n : names) entries.push_back(ListEntry{.meta = Meta(n), .flags = 0});
    return FakeBucket(std::move(entries));
  }

  ListFetch Fetch(const std::string& prefix) {
    return [this, prefix](const std::string& after, size_t limit) -> Result<std::vector<ListEntry>> {
      std::vector<ListEntry> out;
      for (auto& e : entries_) {
        if (out.size() == limit) break;
        if (!e.meta.name.starts_with(prefix) || e.meta.name <= after) continue;
        out.push_back(e);
        ++names_read_;
      }
      return out;
    };
  }
  size_t names_read() const { return names_read_; }

 private:
  std::vector<ListEntry> entries_;
  size_t names_read_ = 0;
};

std::vector<std::string> Names(const std::vector<ListEntry>& entries) {
  std::vector<std::string> out;
  for (auto& e : entries) out.push_back(e.flags & kEntryIsDir ? "[" + e.meta.name + "]" : e.meta.name);
  return out;
}

std::vector<std::string> ListAll(FakeBucket& bucket, const std::string& prefix, size_t page, bool no_dirs = false) {
  std::vector<std::string> out;
  std::string token;
  for (int pages = 0; pages < 1000; ++pages) {
    auto got = ListNoRecursion(prefix, token, page, no_dirs, bucket.Fetch(prefix));
    EXPECT_TRUE(got.ok());
    for (auto& n : Names(*got)) out.push_back(n);
    if (got->size() < page) return out;
    token = got->back().meta.name;
  }
  ADD_FAILURE() << "no end of listing";
  return out;
}

TEST(NoRecursionDir, AsAisChecksDirectories) {
  // prefix "aaa/": direct children listed, deeper names behind their directory
  EXPECT_EQ(NoRecursionDir("aaa/", "aaa/x"), "");
  EXPECT_EQ(NoRecursionDir("aaa/", "aaa/bbb/x"), "aaa/bbb/");
  EXPECT_EQ(NoRecursionDir("aaa/", "aaa/bbb/ccc/x"), "aaa/bbb/");
  // no prefix: the top level
  EXPECT_EQ(NoRecursionDir("", "x"), "");
  EXPECT_EQ(NoRecursionDir("", "a/b/c"), "a/");
  // a prefix without its '/' that names a directory is walked into; a sibling is one level
  EXPECT_EQ(NoRecursionDir("aaa", "aaa/x"), "");
  EXPECT_EQ(NoRecursionDir("aaa", "aaa/bbb/x"), "aaa/bbb/");
  EXPECT_EQ(NoRecursionDir("aaa", "aaab/x"), "aaab/");
  EXPECT_EQ(NoRecursionDir("aaa", "aaa.txt"), "");
  // a prefix that ends inside a name
  EXPECT_EQ(NoRecursionDir("aaa/b", "aaa/bbb/x"), "aaa/bbb/");
  EXPECT_EQ(NoRecursionDir("aaa/b", "aaa/b.txt"), "");
}

TEST(ListNoRecursion, TopLevelObjectsAndDirectoriesInNameOrder) {
  auto bucket = FakeBucket::Of({"a-b", "a.txt", "a/x", "a/y/z", "a0", "b/c/d", "c"});
  // '-' and '.' sort before '/', '0' after it: the directory "a/" sits between them
  EXPECT_EQ(ListAll(bucket, "", 100), (std::vector<std::string>{"a-b", "a.txt", "[a/]", "a0", "[b/]", "c"}));
  EXPECT_EQ(ListAll(bucket, "a/", 100), (std::vector<std::string>{"a/x", "[a/y/]"}));
  EXPECT_EQ(ListAll(bucket, "a", 100), (std::vector<std::string>{"a-b", "a.txt", "a/x", "[a/y/]", "a0"}));
  EXPECT_EQ(ListAll(bucket, "a/y/", 100), (std::vector<std::string>{"a/y/z"}));
  EXPECT_EQ(ListAll(bucket, "nothing/", 100), (std::vector<std::string>{}));
}

TEST(ListNoRecursion, NoDirsLeavesOnlyTheObjectsOfTheLevel) {
  auto bucket = FakeBucket::Of({"a/x", "a/y/z", "b", "c/d"});
  EXPECT_EQ(ListAll(bucket, "", 100, /*no_dirs=*/true), (std::vector<std::string>{"b"}));
  EXPECT_EQ(ListAll(bucket, "a/", 100, true), (std::vector<std::string>{"a/x"}));
  EXPECT_EQ(ListAll(bucket, "c/", 100, true), (std::vector<std::string>{"c/d"}));
}

TEST(ListNoRecursion, EveryPageSizeGivesTheSameListing) {
  std::vector<std::string> names;
  for (int d = 0; d < 5; ++d) {
    for (int i = 0; i < 7; ++i) names.push_back("top/d" + std::to_string(d) + "/" + std::to_string(i));
    names.push_back("top/f" + std::to_string(d));
    names.push_back("top/d" + std::to_string(d) + "/deep/x");
  }
  auto bucket = FakeBucket::Of(names);
  auto whole = ListAll(bucket, "top/", 1000);
  ASSERT_EQ(whole.size(), 10u);
  EXPECT_TRUE(std::is_sorted(whole.begin(), whole.end(), [](const std::string& a, const std::string& b) {
    auto bare = [](const std::string& s) { return s.front() == '[' ? s.substr(1, s.size() - 2) : s; };
    return bare(a) < bare(b);
  }));
  for (size_t page = 1; page <= 11; ++page) EXPECT_EQ(ListAll(bucket, "top/", page), whole) << "page " << page;
}

TEST(ListNoRecursion, ADirectoryIsSkippedNotRead) {
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) names.push_back("big/" + std::to_string(i));
  names.push_back("z");
  auto bucket = FakeBucket::Of(names);
  EXPECT_EQ(ListAll(bucket, "", 100), (std::vector<std::string>{"[big/]", "z"}));
  EXPECT_LT(bucket.names_read(), 600u);  // one batch into "big/", then past it
}

TEST(ListNoRecursion, ContinuesAfterADirectoryToken) {
  auto bucket = FakeBucket::Of({"a/1", "a/2", "b/1", "c"});
  auto first = ListNoRecursion("", "", 1, false, bucket.Fetch(""));
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(Names(*first), (std::vector<std::string>{"[a/]"}));
  auto next = ListNoRecursion("", "a/", 10, false, bucket.Fetch(""));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(Names(*next), (std::vector<std::string>{"[b/]", "c"}));
}

TEST(ListNoRecursion, FilesInAListedArchiveFollowIt) {
  std::vector<ListEntry> entries = {
      {.meta = Meta("d/s.tar", 9), .flags = 512},
      {.meta = Meta("d/s.tar/in", 1), .flags = kInArch},
      {.meta = Meta("s.tar", 9), .flags = 512},
      {.meta = Meta("s.tar/a", 1), .flags = kInArch},
      {.meta = Meta("s.tar/b/c", 1), .flags = kInArch},
      {.meta = Meta("t", 1), .flags = 0},
  };
  FakeBucket bucket(entries);
  EXPECT_EQ(ListAll(bucket, "", 100), (std::vector<std::string>{"[d/]", "s.tar", "s.tar/a", "s.tar/b/c", "t"}));
  // a page that ends inside the archive continues with its files
  EXPECT_EQ(ListAll(bucket, "", 2), (std::vector<std::string>{"[d/]", "s.tar", "s.tar/a", "s.tar/b/c", "t"}));
}

// The keys and flags of one msgpack-encoded entry.
std::map<std::string, msgpack::object> Decode(const std::string& buf, msgpack::object_handle* oh) {
  *oh = msgpack::unpack(buf.data(), buf.size());
  std::map<std::string, msgpack::object> out;
  oh->get().convert(out);
  return out;
}

std::set<std::string> Keys(const std::map<std::string, msgpack::object>& m) {
  std::set<std::string> out;
  for (auto& [k, v] : m) out.insert(k);
  return out;
}

TEST(ListProps, NameOnlyGivesNamesAndTheCachedFlag) {
  ObjectMeta m = FullMeta();
  m.upload_id = "u";  // chunked: still no EntryIsChunked, AIS lists names only without metadata
  for (const char* props : {"", "name", "name,size", "name,size,version,checksum,custom"}) {
    auto p = ListProps::Parse(props, kLsNameOnly | /*LsCached*/ 1);
    ASSERT_TRUE(p.ok());
    msgpack::object_handle oh;
    auto e = Decode(EncodeEntryMsgpack(m, *p, "t[x]"), &oh);
    EXPECT_EQ(Keys(e), (std::set<std::string>{"n", "f"})) << props;
    EXPECT_EQ(e["f"].as<uint16_t>(), kEntryIsCached) << props;
  }
}

TEST(ListProps, NameSizeAndDefaults) {
  ObjectMeta m = FullMeta();
  msgpack::object_handle oh;
  auto p = ListProps::Parse("name,size,version,checksum", kLsNameSize);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(Keys(Decode(EncodeEntryMsgpack(m, *p, "t[x]"), &oh)), (std::set<std::string>{"n", "s", "f"}));
  p = ListProps::Parse("", 0);  // "" is name,size,cached
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(Keys(Decode(EncodeEntryMsgpack(m, *p, "t[x]"), &oh)), (std::set<std::string>{"n", "s", "f"}));
  p = ListProps::Parse("name,version,checksum", 0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(Keys(Decode(EncodeEntryMsgpack(m, *p, "t[x]"), &oh)), (std::set<std::string>{"n", "v", "cs", "f"}));
}

TEST(ListProps, AnUncachedRemoteEntryHasNoStorageProps) {
  // As AIS lists a remote object it does not hold: what the backend said, no atime (the CLI
  // showed 01 Jan 70), version, location or copies.
  ObjectMeta m = FullMeta();
  m.custom = {{"ETag", "e"}};
  auto p = ListProps::Parse("name,size,version,checksum,atime,location,copies,custom", 0);
  ASSERT_TRUE(p.ok());
  msgpack::object_handle oh;
  const std::set<std::string> remote_only = {"n", "s", "cs", "m", "f"};
  EXPECT_EQ(Keys(Decode(EncodeEntryMsgpack(m, *p, "t[x]", 0, /*local=*/false), &oh)), remote_only);
  EXPECT_EQ(Keys(Decode(EncodeEntryMsgpack(m, *p, "t[x]", kEntryIsCached, false), &oh)),
            (std::set<std::string>{"n", "s", "cs", "m", "a", "v", "t", "c", "f"}));

  ListPage page;
  page.remote = true;
  page.entries = {m, m};
  page.extra_flags = {0, kEntryIsCached};
  auto json = nlohmann::json::parse(EncodeListPageJson(page, *p, "t[x]"));
  std::set<std::string> uncached, cached;
  for (auto& [k, v] : json["entries"][0].items()) uncached.insert(k);
  for (auto& [k, v] : json["entries"][1].items()) cached.insert(k);
  EXPECT_EQ(uncached, (std::set<std::string>{"name", "size", "checksum", "custom-md", "flags"}));
  EXPECT_EQ(cached, (std::set<std::string>{"name", "size", "checksum", "custom-md", "atime", "version", "location",
                                           "copies", "flags"}));
}

TEST(ListProps, ADirectoryEntryIsItsNameAndFlag) {
  ListPage page;
  page.entries.push_back(Meta("a/", 0));
  page.extra_flags.push_back(kEntryIsDir);
  auto p = ListProps::Parse("name,size,version,atime,location,copies", 0);
  ASSERT_TRUE(p.ok());
  auto json = nlohmann::json::parse(EncodeListPageJson(page, *p, "t[x]"));
  EXPECT_EQ(json["entries"][0], (nlohmann::json{{"name", "a/"}, {"flags", kEntryIsDir}}));
  msgpack::object_handle oh;
  auto e = Decode(EncodeEntryMsgpack(page.entries[0], *p, "t[x]", kEntryIsDir), &oh);
  EXPECT_EQ(Keys(e), (std::set<std::string>{"n", "f"}));
  EXPECT_EQ(e["f"].as<uint16_t>(), kEntryIsDir);
}

}  // namespace
}  // namespace ais
