// Store listings: name order across mountpaths, pages, the headers kept with directories and
// the header snapshot kept across a restart.
#include <gtest/gtest.h>

#include "store/store_fixture.h"

namespace ais::store_test {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// List

const std::vector<std::string> kListNames = {
    "a", "a-c", "a/b", "a/b/c", "a.b", "a0", "A", "b", "a/b-", "a/ba", "~", " space", ".hidden",
    "\xe6\x97\xa5\xe6\x9c\xac/\xd1\x84\xd0\xb0\xd0\xb9\xd0\xbb", "\xc3\xa9t\xc3\xa9", "z/y/x", "#?%&=+",
};

std::vector<std::string> Filter(std::vector<std::string> names, const std::string& prefix,
                                const std::string& after, size_t limit) {
  std::sort(names.begin(), names.end());
  std::vector<std::string> out;
  for (auto& n : names) {
    if (out.size() < limit && n.starts_with(prefix) && n > after) out.push_back(n);
  }
  return out;
}


TEST_F(StoreTest, ListInByteOrderAcrossMountpaths) {
  for (const auto& n : kListNames) ASSERT_TRUE(Put("plain", n, "x" + n).ok()) << n;
  std::set<size_t> used;
  for (const auto& n : kListNames) used.insert(store_->mountpaths().PrimaryFor("plain", n));
  EXPECT_GT(used.size(), 1u);  // the merge of several mountpaths is really exercised

  EXPECT_EQ(ListNames("plain", {}), Filter(kListNames, "", "", SIZE_MAX));
  auto l = store_->List("plain", {});
  ASSERT_TRUE(l.ok());
  for (const auto& m : *l) EXPECT_EQ(m.size, m.name.size() + 1) << m.name;

  const std::vector<std::tuple<std::string, std::string, size_t>> queries = {
      {"a", "", 100},    {"a/", "", 100}, {"a/b", "", 100}, {"a/b/", "", 100}, {"z/y/", "", 100},
      {"\xe6", "", 100}, {"zz", "", 100}, {"", "a", 100},   {"", "a/b", 100}, {"", "a.b", 100},
      {"", "~", 100},    {"", "a", 3},    {"a", "a-c", 2},  {"", "", 0},      {"", "", 1},
  };
  for (const auto& [prefix, after, limit] : queries) {
    ListQuery q;
    q.prefix = prefix;
    q.after = after;
    q.limit = limit;
    EXPECT_EQ(ListNames("plain", q), Filter(kListNames, prefix, after, limit))
        << "prefix \"" << prefix << "\" after \"" << after << "\" limit " << limit;
  }
}

TEST_F(StoreTest, ListPagesConcatenateToTheWhole) {
  std::vector<std::string> names = kListNames;
  for (int i = 0; i < 60; ++i) names.push_back("p/" + std::to_string(i * 37 % 100) + (i % 2 ? "/leaf" : ""));
  for (const auto& n : names) ASSERT_TRUE(Put("plain", n, "x").ok()) << n;
  for (const std::string prefix : {"", "p/", "a"}) {
    for (size_t page : {1, 3, 7, 100}) {
      std::vector<std::string> all;
      ListQuery q;
      q.prefix = prefix;
      q.limit = page;
      for (;;) {
        auto got = ListNames("plain", q);
        all.insert(all.end(), got.begin(), got.end());
        if (got.size() < page) break;
        q.after = got.back();
      }
      EXPECT_EQ(all, Filter(names, prefix, "", SIZE_MAX)) << "prefix " << prefix << " page " << page;
    }
  }
}

// Listings keep the headers they read with their directory's sorted entries; every change to an
// object (overwrite, custom metadata, delete) renames or unlinks, which a listing must see.
TEST_F(StoreTest, ListedHeadersFollowEveryChange) {
  for (const std::string n : {"k/a", "k/b", "k/c", "top"}) ASSERT_TRUE(Put("plain", n, n).ok()) << n;
  // Dated back past SortedDirCache::kSettleNs, so that the listings below keep what they read.
  const auto past = fs::file_time_type::clock::now() - std::chrono::seconds(1);
  for (const auto& mp : store_->mountpaths().paths()) {
    for (const auto& e : fs::recursive_directory_iterator(mp)) {
      if (e.is_directory()) fs::last_write_time(e.path(), past);
    }
  }
  auto sizes = [&] {
    std::map<std::string, std::pair<uint64_t, uint64_t>> out;  // name -> (size, version)
    auto l = store_->List("plain", {});
    EXPECT_TRUE(l.ok()) << l.status().message();
    if (l.ok()) {
      for (const auto& m : *l) out[m.name] = {m.size, m.version};
    }
    return out;
  };
  using Want = std::map<std::string, std::pair<uint64_t, uint64_t>>;
  const Want first = {{"k/a", {3, 1}}, {"k/b", {3, 1}}, {"k/c", {3, 1}}, {"top", {3, 1}}};
  EXPECT_EQ(sizes(), first);
  EXPECT_EQ(sizes(), first);  // from the kept headers
  ASSERT_TRUE(Put("plain", "k/a", "longer").ok());
  ASSERT_TRUE(store_->Delete("plain", "k/b").ok());
  ASSERT_TRUE(store_->SetCustom("plain", "k/c", {{"color", "red"}}, false).ok());
  EXPECT_EQ(sizes(), (Want{{"k/a", {6, 2}}, {"k/c", {3, 1}}, {"top", {3, 1}}}));  // SetCustom keeps the version
  auto l = store_->List("plain", ListQuery{.prefix = "k/c", .after = "", .limit = 1});
  ASSERT_TRUE(l.ok() && l->size() == 1);
  EXPECT_EQ(l->front().custom, (std::vector<std::pair<std::string, std::string>>{{"color", "red"}}));
}

TEST_F(StoreTest, ListReadsManyHeadersAheadInPages) {
  // Enough objects per directory for the two-thread read-ahead of headers; every page, however
  // it falls, carries each object's own header.
  std::map<std::string, uint64_t> want;
  for (int i = 0; i < 700; ++i) {
    const std::string name = "many/" + std::to_string(1000 + i);
    ASSERT_TRUE(Put("plain", name, Bytes(static_cast<size_t>(i % 97), static_cast<uint8_t>(i))).ok()) << name;
    want[name] = static_cast<uint64_t>(i % 97);
  }
  for (size_t limit : {size_t{10000}, size_t{1}, size_t{333}}) {
    std::map<std::string, uint64_t> got;
    std::string after;
    for (;;) {
      auto page = store_->List("plain", ListQuery{.prefix = "many/", .after = after, .limit = limit});
      ASSERT_TRUE(page.ok()) << page.status().message();
      for (const auto& m : *page) got[m.name] = m.size;
      if (page->size() < limit) break;
      after = page->back().name;
    }
    EXPECT_EQ(got, want) << "limit " << limit;
  }
}

// A listing takes the headers the store wrote from the HeaderCache (it never opens those files)
// and reads a file the cache does not know by its inode: one put there behind the store's back.
TEST_F(StoreTest, ListTakesWrittenHeadersOnlyForTheFilesWritten) {
  ASSERT_TRUE(Put("plain", "hc/kept", "1234").ok());
  ASSERT_TRUE(Put("plain", "hc/swapped", "v1").ok());
  const Mountpaths& mps = store_->mountpaths();
  auto path_of = [&](const std::string& name) { return mps.ObjectPath(mps.PrimaryFor("plain", name), "plain", name); };
  const std::string aside = root_.Sub("v1-copy");
  fs::copy_file(path_of("hc/swapped"), aside);  // version 1's file, as a new inode
  ASSERT_TRUE(Put("plain", "hc/swapped", "version2").ok());
  fs::rename(aside, path_of("hc/swapped"));  // back to version 1 behind the store's back
  {  // and the kept object's header made unreadable in place, which the store never does
    UniqueFd fd(::open(path_of("hc/kept").c_str(), O_WRONLY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
    ASSERT_EQ(::pwrite(fd.get(), "garbage!", 8, 0), 8);
  }
  auto l = store_->List("plain", ListQuery{.prefix = "hc/", .after = ""});
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ((*l)[0].name, "hc/kept");
  EXPECT_EQ((*l)[0].size, 4u);  // from the cache: the file's header is garbage now
  EXPECT_EQ((*l)[1].name, "hc/swapped");
  EXPECT_EQ((*l)[1].size, 2u);  // read from the file: the cache knew another inode there
  EXPECT_EQ((*l)[1].version, 1u);
  // A deleted object's header is forgotten (a later file may get its inode number).
  const size_t known = Headers().size();
  ASSERT_TRUE(store_->Delete("plain", "hc/swapped").ok());
  EXPECT_EQ(Headers().size(), known - 1);
}

TEST_F(StoreTest, HeaderSnapshotOutlivesARestart) {
  ASSERT_TRUE(Put("plain", "snap/a", "1234").ok());
  const Mountpaths& mps = store_->mountpaths();
  const std::string path = mps.ObjectPath(mps.PrimaryFor("plain", "snap/a"), "plain", "snap/a");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  const std::string dir = DirName(path) + "/", file = path.substr(dir.size());
  auto known_size = [&]() -> uint64_t {
    std::shared_ptr<const ObjectMeta> meta;
    std::vector<HeaderCache::Want> want = {{.file = file, .ino = static_cast<uint64_t>(st.st_ino), .out = &meta}};
    Headers().Find(dir, want);
    return meta ? meta->size : 0;
  };
  ASSERT_EQ(known_size(), 4u);
  ASSERT_TRUE(store_->SaveHeaderSnapshots().ok());
  for (size_t mp = 0; mp < mps.size(); ++mp) EXPECT_TRUE(fs::exists(mps.HeaderSnapshotPath(mp))) << mp;
  Headers().ForgetUnder(root_.path() + "/");  // what a new process knows
  ASSERT_EQ(known_size(), 0u);
  Reopen();
  const Mountpaths& reopened = store_->mountpaths();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (known_size() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // read on a thread of the store's
  }
  EXPECT_EQ(known_size(), 4u);
  for (size_t mp = 0; mp < reopened.size(); ++mp) EXPECT_FALSE(fs::exists(reopened.HeaderSnapshotPath(mp))) << mp;
}

}  // namespace
}  // namespace ais::store_test
