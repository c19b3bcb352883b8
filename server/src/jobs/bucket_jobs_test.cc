// Bucket and multi-object jobs on a real Store (two mountpaths in a temp dir): what each
// writes, counts and reports, and that an aborted job leaves nothing half-made.
#include "jobs/bucket_jobs.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "store/store.h"
#include "archive/tar_scanner.h"
#include "util/test_util.h"

namespace ais {
namespace {

class BucketJobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::Open(StoreOptions{{root_.Sub("mp1"), root_.Sub("mp2")}, false});
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
    ASSERT_TRUE(store_->CreateBucket("src", nullptr).ok());
    ASSERT_TRUE(store_->CreateBucket("dst", nullptr).ok());
  }

  void Put(const std::string& bucket, const std::string& name, const std::string& data) {
    auto w = store_->BeginPut(bucket, name, PutOptions{});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Write(data.data(), data.size()).ok());
    ObjectMeta m;
    ASSERT_TRUE((*w)->Commit(&m).ok());
  }

  std::string Get(const std::string& bucket, const std::string& name) {
    auto obj = store_->OpenShared(bucket, name);
    if (!obj.ok()) return "<" + obj.status().message() + ">";
    std::string out((*obj)->size(), '\0');
    EXPECT_TRUE((*obj)->ReadAt(0, out.data(), out.size()).ok());
    return out;
  }

  std::set<std::string> Names(const std::string& bucket) {
    std::set<std::string> out;
    auto l = store_->List(bucket, ListQuery{});
    EXPECT_TRUE(l.ok());
    for (auto& m : *l) out.insert(m.name);
    return out;
  }

  static ObjectSelection Sel(const nlohmann::json& v) {
    auto s = ObjectSelection::FromJson(v);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return *s;
  }

  test::TempDir root_;
  std::unique_ptr<Store> store_;
  JobControl jc_;
};

TEST(CopyNaming, PrependAndExtension) {
  CopyNaming n;
  n.prepend = "p/";
  n.ext = {{"jpg", "png"}};
  EXPECT_EQ(n.Apply("a/b.jpg"), "p/a/b.png");
  EXPECT_EQ(n.Apply("a.b/c"), "p/a.b/c");  // the dot is in a directory, not an extension
  EXPECT_EQ(n.Apply("x.txt"), "p/x.txt");
}

TEST_F(BucketJobsTest, CopyBucketWithPrefixNamingAndDryRun) {
  for (int i = 0; i < 5; ++i) Put("src", "a/" + std::to_string(i) + ".jpg", std::string(i + 1, 'x'));
  Put("src", "b/z", "z");
  CopyBucketArgs args;
  args.src = "src";
  args.dst = "dst";
  args.prefix = "a/";
  args.dry_run = true;
  ASSERT_TRUE(RunCopyBucket(*store_, jc_, args).ok());
  EXPECT_TRUE(Names("dst").empty());
  args.dry_run = false;
  args.naming.prepend = "c/";
  args.naming.ext = {{"jpg", "png"}};
  ASSERT_TRUE(RunCopyBucket(*store_, jc_, args).ok());
  std::set<std::string> want = {"c/a/0.png", "c/a/1.png", "c/a/2.png", "c/a/3.png", "c/a/4.png"};
  EXPECT_EQ(Names("dst"), want);
  EXPECT_EQ(Get("dst", "c/a/2.png"), "xxx");
}

TEST_F(BucketJobsTest, MoveBucketAndAbort) {
  for (int i = 0; i < 20; ++i) Put("src", "o" + std::to_string(i), "v");
  ASSERT_TRUE(store_->CreateBucket("moved", nullptr).ok());
  JobControl aborted;
  aborted.Abort();
  ASSERT_TRUE(RunMoveBucket(*store_, aborted, "src", "moved").ok());
  EXPECT_TRUE(store_->GetBucket("moved").status().IsNotFound());  // the half-made copy is gone
  EXPECT_EQ(Names("src").size(), 20u);
  ASSERT_TRUE(store_->CreateBucket("moved", nullptr).ok());
  ASSERT_TRUE(RunMoveBucket(*store_, jc_, "src", "moved").ok());
  EXPECT_TRUE(store_->GetBucket("src").status().IsNotFound());
  EXPECT_EQ(Names("moved").size(), 20u);
  EXPECT_EQ(Get("moved", "o7"), "v");
}

TEST_F(BucketJobsTest, DeleteListRecordsMissingNamesRangeSkipsThem) {
  for (int i = 0; i < 4; ++i) Put("src", "k" + std::to_string(i), "v");
  ASSERT_TRUE(RunDeleteObjects(*store_, jc_, "src", Sel({{"objnames", {"k0", "nope", "k1"}}})).ok());
  EXPECT_EQ(jc_.SoftErrors(), "ais://src/nope does not exist");
  JobControl range;
  ASSERT_TRUE(RunDeleteObjects(*store_, range, "src", Sel({{"template", "k{0..99}"}})).ok());
  EXPECT_EQ(range.SoftErrors(), "");
  EXPECT_TRUE(Names("src").empty());
  EXPECT_TRUE(RunDeleteObjects(*store_, jc_, "nobucket", Sel({{"template", ""}})).IsNotFound());
}

TEST_F(BucketJobsTest, CopyObjectsStopsOrGoesOnPastErrors) {
  Put("src", "a", "A");
  Put("src", "b", "B");
  CopyObjectsArgs args;
  args.src = "src";
  args.dst = "dst";
  args.sel = Sel({{"objnames", {"a", "gone", "b"}}});
  Status st = RunCopyObjects(*store_, jc_, args);
  EXPECT_TRUE(st.IsNotFound()) << st.message();
  std::set<std::string> only_a = {"a"};
  EXPECT_EQ(Names("dst"), only_a);
  args.continue_on_err = true;
  JobControl coer;
  ASSERT_TRUE(RunCopyObjects(*store_, coer, args).ok());
  EXPECT_EQ(coer.SoftErrors(), "ais://src/gone does not exist");
  std::set<std::string> both = {"a", "b"};
  EXPECT_EQ(Names("dst"), both);
}

TEST_F(BucketJobsTest, ArchiveWritesATarAndAppends) {
  Put("src", "x1", "one");
  Put("src", "x2", "two!");
  ArchiveArgs args;
  args.src = "src";
  args.dst = "dst";
  args.archname = "a.tar";
  args.sel = Sel({{"template", "x{1..2}"}});
  args.include_src_bucket = true;
  ASSERT_TRUE(RunArchive(*store_, jc_, args).ok());
  Put("src", "x3", "three");
  args.sel = Sel({{"objnames", {"x3"}}});
  args.append = true;
  ASSERT_TRUE(RunArchive(*store_, jc_, args).ok());
  std::string tar = Get("dst", "a.tar");
  TarScanner scan(
      [&](uint64_t off, void* buf, size_t len) {
        std::memcpy(buf, tar.data() + off, len);
        return Status::OK();
      },
      tar.size());
  std::vector<std::string> names;
  TarEntry e;
  while (*scan.Next(&e)) {
    names.push_back(e.name);
    if (e.name == "src/x2") {
      EXPECT_EQ(tar.substr(e.offset, e.size), "two!");
    }
  }
  std::vector<std::string> want = {"src/x1", "src/x2", "src/x3"};
  EXPECT_EQ(names, want);
}

TEST_F(BucketJobsTest, AbortedArchiveLeavesNoObject) {
  Put("src", "x1", "one");
  ArchiveArgs args;
  args.src = "src";
  args.dst = "dst";
  args.archname = "never.tar";
  args.sel = Sel({{"template", ""}});
  JobControl aborted;
  aborted.Abort();
  ASSERT_TRUE(RunArchive(*store_, aborted, args).ok());
  EXPECT_TRUE(store_->Head("dst", "never.tar").status().IsNotFound());
}

TEST_F(BucketJobsTest, SummaryCountsAndSizes) {
  Put("src", "p/a", std::string(10, 'a'));
  Put("src", "p/b", std::string(30, 'b'));
  Put("src", "q", std::string(5, 'q'));
  auto s = SummarizeBucket(*store_, jc_, "src", "p/");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->obj_count, 2u);
  EXPECT_EQ(s->size_present, 40u);
  EXPECT_EQ(s->min_size, 10u);
  EXPECT_EQ(s->max_size, 30u);
  EXPECT_GT(s->size_on_disk, 40u);
  EXPECT_GT(s->disks_size, 0u);
  EXPECT_TRUE(SummarizeBucket(*store_, jc_, "nobucket", "").status().IsNotFound());
}

TEST_F(BucketJobsTest, PromoteFileAndDirectory) {
  std::string dir = root_.Sub("promote");
  std::filesystem::create_directories(dir + "/sub");
  std::ofstream(dir + "/f.txt") << "file";
  std::ofstream(dir + "/sub/g.txt") << "nested";
  PromoteArgs one;
  one.root = dir;
  one.src = dir + "/f.txt";
  one.bucket = "dst";
  one.obj = "to/";
  bool done = false;
  ASSERT_TRUE(PromoteFile(*store_, one, &done).ok());
  EXPECT_TRUE(done);
  EXPECT_EQ(Get("dst", "to/f.txt"), "file");
  PromoteArgs all;
  all.root = dir;
  all.src = dir;
  all.bucket = "dst";
  all.obj = "tree";
  all.recursive = true;
  all.delete_src = true;
  ASSERT_TRUE(RunPromoteDir(*store_, jc_, all).ok());
  EXPECT_EQ(Get("dst", "tree/sub/g.txt"), "nested");
  EXPECT_EQ(Get("dst", "tree/f.txt"), "file");
  EXPECT_FALSE(std::filesystem::exists(dir + "/sub/g.txt"));
}

TEST_F(BucketJobsTest, PromoteStaysBeneathItsRootAndNeverWaitsOnAFifo) {
  const std::string root = root_.Sub("promote-root");
  const std::string outside = root_.Sub("outside");
  std::filesystem::create_directories(root + "/dir");
  std::filesystem::create_directories(outside);
  std::ofstream(outside + "/secret") << "secret";
  std::filesystem::create_symlink(outside + "/secret", root + "/link");
  std::filesystem::create_directory_symlink(outside, root + "/dir/up");
  ASSERT_EQ(::mkfifo((root + "/fifo").c_str(), 0600), 0);
  auto args = [&](const std::string& src) {
    PromoteArgs a;
    a.root = root;
    a.src = src;
    a.bucket = "dst";
    a.obj = "x";
    return a;
  };
  bool done = false;
  for (const std::string& src : {root + "/link", root + "/dir/up/secret"}) {
    Status st = PromoteFile(*store_, args(src), &done);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << src << ": " << st.message();
    EXPECT_NE(st.message().find("symbolic link"), std::string::npos) << st.message();
    EXPECT_FALSE(PromoteSourceIsDir(args(src)).ok()) << src;
  }
  Status fifo = PromoteFile(*store_, args(root + "/fifo"), &done);  // returns at once: opened non-blocking
  EXPECT_EQ(fifo.code(), Status::Code::kInvalidArgument) << fifo.message();
  EXPECT_FALSE(done);
  EXPECT_EQ(PromoteSourceIsDir(args(root + "/fifo")).status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(PromoteSourceIsDir(args(root + "/missing")).status().IsNotFound());
  EXPECT_TRUE(*PromoteSourceIsDir(args(root + "/dir")));
  // A directory walk skips the symlinks in it.
  PromoteArgs all = args(root);
  all.recursive = true;
  ASSERT_TRUE(RunPromoteDir(*store_, jc_, all).ok());
  EXPECT_FALSE(store_->Head("dst", "x/link").ok());
  EXPECT_FALSE(store_->Head("dst", "x/dir/up/secret").ok());
}

}  // namespace
}  // namespace ais
