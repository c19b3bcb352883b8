// List-objects with LsArchDir: files of archives merged in name order, pages that end inside an
// archive or between an archive and its files, prefixes that reach into an archive.
#include "archive/arch_dir.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "archive/archive_test_util.h"
#include "util/test_util.h"

namespace ais {
namespace {

class ArchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions opts;
    opts.mountpaths.push_back(root_.Sub("mp"));
    auto s = Store::Open(opts);
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
    ASSERT_TRUE(store_->CreateBucket("b", nullptr).ok());
    std::vector<test::Entry> files = {{"z.txt", "zz", 0}, {"d/x.bin", std::string(10, 'x'), 0}};
    test::PutObject(*store_, "b", "a.tar", test::BuildArchive(ArchiveFormat::kTar, files));
    test::PutObject(*store_, "b", "a.tar-1", "sorts between a.tar and its files");
    test::PutObject(*store_, "b", "m.zip", test::BuildArchive(ArchiveFormat::kZip, files));
    test::PutObject(*store_, "b", "n.tgz", "not an archive after all");
    test::PutObject(*store_, "b", "z", "last");
  }

  std::vector<std::string> Names(const std::string& prefix, size_t limit) {
    std::vector<std::string> names;
    ListQuery q{.prefix = prefix, .after = "", .limit = limit};
    for (int pages = 0; pages < 100; ++pages) {
      auto page = ListWithArchives(*store_, "b", q);
      EXPECT_TRUE(page.ok()) << page.status().message();
      if (!page.ok()) break;
      for (auto& e : *page) names.push_back(e.meta.name);
      if (page->size() < limit) break;
      q.after = page->back().meta.name;
    }
    return names;
  }

  test::TempDir root_;
  std::unique_ptr<Store> store_;
};

TEST_F(ArchDirTest, FilesFollowTheirArchiveInNameOrder) {
  const std::vector<std::string> want = {"a.tar",     "a.tar-1",     "a.tar/d/x.bin", "a.tar/z.txt", "m.zip",
                                         "m.zip/d/x.bin", "m.zip/z.txt", "n.tgz",         "z"};
  for (size_t limit : {1, 2, 3, 4, 100}) EXPECT_EQ(Names("", limit), want) << "page size " << limit;
  auto page = ListWithArchives(*store_, "b", ListQuery{.prefix = "", .after = "", .limit = 100});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ((*page)[0].flags, kEntryIsArchive);
  EXPECT_EQ((*page)[1].flags, 0);
  EXPECT_EQ((*page)[2].flags, kEntryInArch);
  EXPECT_EQ((*page)[2].meta.size, 10u);
  EXPECT_EQ((*page)[7].flags, kEntryIsArchive);  // by its name, though it does not read as one
}

TEST_F(ArchDirTest, PrefixReachesIntoAnArchive) {
  EXPECT_EQ(Names("a.tar/d", 10), std::vector<std::string>{"a.tar/d/x.bin"});
  EXPECT_EQ(Names("m.zip/", 1), (std::vector<std::string>{"m.zip/d/x.bin", "m.zip/z.txt"}));
  EXPECT_EQ(Names("a.tar", 10), (std::vector<std::string>{"a.tar", "a.tar-1", "a.tar/d/x.bin", "a.tar/z.txt"}));
}

}  // namespace
}  // namespace ais
