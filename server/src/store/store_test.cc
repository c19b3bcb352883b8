// Store on four real mountpaths in a temp dir: the object life cycle, chunking, listing,
// multipart upload, rechunk, and crash recovery (docs/storage-format.md).
#include "store/store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "store/header_cache.h"
#include "store/names.h"
#include "util/file.h"
#include "util/test_util.h"

namespace ais {
namespace {

namespace fs = std::filesystem;

constexpr size_t kPiece = 333;  // writes straddle chunk boundaries
const char* const kChunkedProps = R"({"chunks":{"objsize_limit":"4KiB","chunk_size":"1KiB"}})";

std::string Bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// Compares object bytes without dumping kilobytes of binary into the test log.
::testing::AssertionResult SameBytes(const std::string& got, const std::string& want) {
  if (got == want) return ::testing::AssertionSuccess();
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  return ::testing::AssertionFailure() << "got " << got.size() << " bytes, want " << want.size()
                                       << "; first difference at byte " << i;
}

std::string Hash(const std::string& type, const std::string& data) {
  auto c = Checksummer::Create(type);
  (*c)->Update(data.data(), data.size());
  return (*c)->FinishHex();
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 1; i <= 4; ++i) paths_.push_back(root_.Sub("mp" + std::to_string(i)));
    Reopen();
    ASSERT_TRUE(store_->CreateBucket("plain", nullptr).ok());
    ASSERT_TRUE(store_->CreateBucket("chunky", nlohmann::json::parse(kChunkedProps)).ok());
  }

  void Reopen(bool fsync = false) {
    store_.reset();
    auto s = Store::Open(StoreOptions{paths_, fsync});
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
  }

  Result<ObjectMeta> PutWith(const std::string& bucket, const std::string& name, const std::string& data,
                             PutOptions opts) {
    auto w = store_->BeginPut(bucket, name, std::move(opts));
    if (!w.ok()) return w.status();
    for (size_t off = 0; off < data.size(); off += kPiece) {
      AIS_RETURN_IF_ERROR((*w)->Write(data.data() + off, std::min(kPiece, data.size() - off)));
    }
    ObjectMeta meta;
    AIS_RETURN_IF_ERROR((*w)->Commit(&meta));
    return meta;
  }
  Result<ObjectMeta> Put(const std::string& bucket, const std::string& name, const std::string& data) {
    PutOptions opts;
    opts.size = data.size();
    return PutWith(bucket, name, data, std::move(opts));
  }

  static Result<std::string> Read(ObjectHandle& h, uint64_t start, uint64_t len) {
    auto segs = h.Slice(start, len);
    if (!segs.ok()) return segs.status();
    std::string out(len, '\0');
    AIS_RETURN_IF_ERROR(ReadSegments(*segs, out.data()));
    return out;
  }
  Result<std::string> Get(const std::string& bucket, const std::string& name) {
    auto h = store_->Open(bucket, name);
    if (!h.ok()) return h.status();
    return Read(*h, 0, h->meta().size);
  }
  void ExpectObject(const std::string& bucket, const std::string& name, const std::string& want) {
    auto got = Get(bucket, name);
    ASSERT_TRUE(got.ok()) << bucket << "/" << name << ": " << got.status().message();
    EXPECT_TRUE(SameBytes(*got, want)) << bucket << "/" << name;
  }

  std::vector<std::string> ListNames(const std::string& bucket, const ListQuery& q) {
    auto l = store_->List(bucket, q);
    EXPECT_TRUE(l.ok()) << l.status().message();
    std::vector<std::string> out;
    if (l.ok()) {
      for (const auto& m : *l) out.push_back(m.name);
    }
    return out;
  }

  // Every regular file below the mountpaths.
  std::set<std::string> Files() const {
    std::set<std::string> out;
    for (const auto& mp : store_->mountpaths().paths()) {
      for (const auto& e : fs::recursive_directory_iterator(mp)) {
        if (e.is_regular_file()) out.insert(e.path().string());
      }
    }
    return out;
  }
  // Every `%ch/<upload id>` directory of a bucket, on all mountpaths.
  std::set<std::string> ChunkDirs(const std::string& bucket) const {
    std::set<std::string> out;
    const Mountpaths& mps = store_->mountpaths();
    for (size_t mp = 0; mp < mps.size(); ++mp) {
      std::string ch = mps.BucketDir(mp, bucket) + "/%ch";
      if (!fs::exists(ch)) continue;
      for (const auto& e : fs::directory_iterator(ch)) out.insert(e.path().string());
    }
    return out;
  }
  std::set<std::string> WorkEntries() const {
    std::set<std::string> out;
    const Mountpaths& mps = store_->mountpaths();
    for (size_t mp = 0; mp < mps.size(); ++mp) {
      for (const auto& e : fs::directory_iterator(mps.WorkDir(mp))) out.insert(e.path().string());
    }
    return out;
  }

  // The disk holds exactly the BMD copies, the committed objects and their chunks: no temp file,
  // marker, part or chunk directory of anything else.
  void ExpectNoLeftovers() {
    const Mountpaths& mps = store_->mountpaths();
    std::set<std::string> want_files;
    for (size_t mp = 0; mp < mps.size(); ++mp) {
      want_files.insert(mps.BmdPath(mp));
      want_files.insert(mps.paths()[mp] + "/.ais.vmd.json");  // the node's identity and mountpath state
    }
    for (const auto& bucket : store_->buckets().Names()) {
      std::set<std::string> want_chunk_dirs;
      ListQuery q;
      q.limit = SIZE_MAX;
      auto objs = store_->List(bucket, q);
      ASSERT_TRUE(objs.ok()) << objs.status().message();
      for (const auto& m : *objs) {
        want_files.insert(mps.ObjectPath(mps.PrimaryFor(bucket, m.name), bucket, m.name));
        for (uint32_t k = 1; k <= m.chunk_sizes.size(); ++k) {
          size_t mp = mps.ForChunk(m.upload_id, k);
          want_files.insert(mps.ChunkPath(mp, bucket, m.upload_id, k));
          want_chunk_dirs.insert(mps.ChunkDir(mp, bucket, m.upload_id));
        }
      }
      EXPECT_EQ(ChunkDirs(bucket), want_chunk_dirs) << bucket;
    }
    EXPECT_EQ(Files(), want_files);
    EXPECT_EQ(WorkEntries(), std::set<std::string>{});
  }

  test::TempDir root_;
  std::vector<std::string> paths_;
  std::unique_ptr<Store> store_;
};

// ---------------------------------------------------------------------------------------------
// PUT / GET / HEAD / DELETE

TEST_F(StoreTest, PutGetHeadDelete) {
  const std::string data = Bytes(10000, 1);
  PutOptions opts;
  opts.size = data.size();
  opts.custom = {{"zeta", "1"}, {"alpha", "2"}};
  auto put = PutWith("plain", "dir/obj.bin", data, opts);
  ASSERT_TRUE(put.ok()) << put.status().message();
  EXPECT_EQ(put->version, 1u);
  EXPECT_EQ(put->size, data.size());
  EXPECT_EQ(put->cksum_type, "xxhash");
  EXPECT_EQ(put->cksum_value, Hash("xxhash", data));
  EXPECT_FALSE(put->chunked());

  auto head = store_->Head("plain", "dir/obj.bin");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->name, "dir/obj.bin");
  EXPECT_EQ(head->size, data.size());
  EXPECT_EQ(head->version, 1u);
  EXPECT_EQ(head->cksum_value, put->cksum_value);
  EXPECT_EQ(head->atime_ns, put->atime_ns);
  EXPECT_GT(head->atime_ns, 0);
  EXPECT_EQ(head->custom, (std::vector<std::pair<std::string, std::string>>{{"alpha", "2"}, {"zeta", "1"}}));
  ExpectObject("plain", "dir/obj.bin", data);

  // The bytes start at a 4 KiB boundary of the object file.
  auto h = store_->Open("plain", "dir/obj.bin");
  ASSERT_TRUE(h.ok());
  auto segs = h->Slice(0, 1);
  ASSERT_TRUE(segs.ok());
  EXPECT_EQ((*segs)[0].offset % kDataAlign, 0u);

  ASSERT_TRUE(store_->Delete("plain", "dir/obj.bin").ok());
  auto gone = store_->Head("plain", "dir/obj.bin");
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(gone.status().IsNotFound());
  EXPECT_NE(gone.status().message().find("ais://plain/dir/obj.bin"), std::string::npos);
  EXPECT_TRUE(store_->Delete("plain", "dir/obj.bin").IsNotFound());
  EXPECT_TRUE(store_->Open("plain", "dir/obj.bin").status().IsNotFound());
  // The emptied directory "dir" is pruned.
  const Mountpaths& mps = store_->mountpaths();
  EXPECT_FALSE(fs::exists(DirName(mps.ObjectPath(mps.PrimaryFor("plain", "dir/obj.bin"), "plain", "dir/obj.bin"))));
  ExpectNoLeftovers();
}

// A shared handle has every file open: reads anywhere, across chunk boundaries, from a const
// handle.
TEST_F(StoreTest, SharedHandleReadsAcrossChunks) {
  std::string data = Bytes(10000, 1);
  ASSERT_TRUE(Put("chunky", "o", data).ok());
  auto h = store_->OpenShared("chunky", "o");
  ASSERT_TRUE(h.ok()) << h.status().message();
  const ObjectHandle& o = **h;
  ASSERT_TRUE(o.meta().chunked());
  EXPECT_EQ(o.size(), data.size());
  for (auto [start, len] : {std::pair<uint64_t, uint64_t>{0, 10000}, {900, 300}, {1023, 2}, {9999, 1}, {5000, 0}}) {
    std::string got(len, '\0');
    ASSERT_TRUE(o.ReadAt(start, got.data(), len).ok());
    EXPECT_EQ(got, data.substr(start, len)) << start << "+" << len;
    uint64_t total = 0;
    for (const auto& seg : o.Segments(start, len)) total += seg.len;
    EXPECT_EQ(total, len);
  }
  EXPECT_EQ(o.Segments(900, 300).size(), 2u);  // 1 KiB chunks: [900, 1200) spans two
}

// The re-open rule: a handle whose chunks vanished (the object was overwritten after it was
// opened) is kConflict, and the object is opened again; any other error is final.
TEST_F(StoreTest, OpenReadingReopensOnConflict) {
  ASSERT_TRUE(Put("chunky", "o", Bytes(5000, 2)).ok());
  auto stale = store_->Open("chunky", "o");
  ASSERT_TRUE(stale.ok());
  std::string now = Bytes(6000, 3);
  ASSERT_TRUE(Put("chunky", "o", now).ok());  // the stale handle's chunks are gone
  int reopens = 0;
  auto reopen = [&] {
    ++reopens;
    return store_->Open("chunky", "o");
  };
  auto h = Store::OpenShared(std::move(stale), reopen);
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(reopens, 1);
  std::string got(now.size(), '\0');
  ASSERT_TRUE((*h)->ReadAt(0, got.data(), got.size()).ok());
  EXPECT_EQ(got, now);

  reopens = 0;
  auto conflict = Store::OpenReading(reopen(), reopen, [](ObjectHandle&) { return Status::Conflict("again"); });
  EXPECT_EQ(conflict.status().code(), Status::Code::kConflict);
  EXPECT_EQ(reopens, 4);  // the first open and three re-opens
  reopens = 0;
  auto bad = Store::OpenReading(reopen(), reopen, [](ObjectHandle&) { return Status::InvalidArgument("no"); });
  EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(reopens, 1);
}

TEST_F(StoreTest, EmptyObject) {
  auto put = Put("plain", "empty", "");
  ASSERT_TRUE(put.ok()) << put.status().message();
  EXPECT_EQ(put->size, 0u);
  EXPECT_EQ(put->cksum_value, "ef46db3751d8e999");  // XXH64 of nothing
  ExpectObject("plain", "empty", "");
  auto h = store_->Open("plain", "empty");
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(h->Slice(0, 0)->empty());
}

TEST_F(StoreTest, MissingBucketIsNotFound) {
  const std::string msg = "bucket \"ais://nope\" does not exist";
  EXPECT_EQ(store_->BeginPut("nope", "x", {}).status().message(), msg);
  EXPECT_EQ(store_->Head("nope", "x").status().message(), msg);
  EXPECT_EQ(store_->Open("nope", "x").status().message(), msg);
  EXPECT_EQ(store_->Delete("nope", "x").message(), msg);
  EXPECT_EQ(store_->List("nope", {}).status().message(), msg);
  EXPECT_EQ(store_->MpuCreate("nope", "x", {}).status().message(), msg);
  EXPECT_TRUE(store_->GetBucket("nope").status().IsNotFound());
}

TEST_F(StoreTest, OpenThroughBucketDirsFollowsTheBucket) {
  ASSERT_TRUE(Put("plain", "a", "first a").ok());
  auto dirs = store_->OpenBucketDirs("plain");  // some mountpaths have no objects dir yet
  ASSERT_TRUE(dirs.ok()) << dirs.status().message();
  EXPECT_TRUE(store_->OpenBucketDirs("nope").status().IsNotFound());
  auto read = [&](const std::string& name) -> Result<std::string> {
    auto h = store_->Open(*dirs, name);
    if (!h.ok()) return h.status();
    return Read(*h, 0, h->meta().size);
  };
  EXPECT_EQ(*read("a"), "first a");
  for (int i = 0; i < 20; ++i) {  // on every mountpath, in directories made after the dirs opened
    std::string name = "d" + std::to_string(i) + "/o";
    ASSERT_TRUE(Put("plain", name, name).ok());
    EXPECT_EQ(*read(name), name);
  }
  auto missing = store_->Open(*dirs, "d0/none");
  EXPECT_EQ(missing.status().message(), store_->Open("plain", "d0/none").status().message());
  // A name starting with '/' stays inside the bucket (its relative path never starts with one).
  EXPECT_TRUE(store_->Open(*dirs, "/etc/passwd").status().IsNotFound());
  ASSERT_TRUE(Put("chunky", "big", Bytes(10000, 3)).ok());  // chunks are found by name as before
  auto chunky = store_->OpenBucketDirs("chunky");
  ASSERT_TRUE(chunky.ok());
  auto big = store_->Open(*chunky, "big");
  ASSERT_TRUE(big.ok());
  EXPECT_TRUE(SameBytes(*Read(*big, 0, 10000), Bytes(10000, 3)));

  // Destroyed: not found, though the held directories still hold its files for a while.
  ASSERT_TRUE(store_->DestroyBucket("plain").ok());
  EXPECT_EQ(read("a").status().message(), "bucket \"ais://plain\" does not exist");
  // Re-created: the new bucket's objects, never the old ones.
  ASSERT_TRUE(store_->CreateBucket("plain", nullptr).ok());
  EXPECT_TRUE(read("a").status().IsNotFound());
  ASSERT_TRUE(Put("plain", "a", "second a").ok());
  EXPECT_EQ(*read("a"), "second a");
}

TEST_F(StoreTest, VersionIncrementsOnOverwrite) {
  for (uint64_t v = 1; v <= 5; ++v) {
    const std::string data = "content #" + std::to_string(v);
    auto put = Put("plain", "obj", data);
    ASSERT_TRUE(put.ok());
    EXPECT_EQ(put->version, v);
    EXPECT_EQ(store_->Head("plain", "obj")->version, v);
    ExpectObject("plain", "obj", data);
  }
  // Across layouts too, and after a restart.
  ASSERT_EQ(Put("chunky", "obj", Bytes(5000, 2))->version, 1u);
  ASSERT_EQ(Put("chunky", "obj", "small")->version, 2u);
  ASSERT_EQ(Put("chunky", "obj", Bytes(6000, 3))->version, 3u);
  Reopen();
  EXPECT_EQ(store_->Head("plain", "obj")->version, 5u);
  EXPECT_EQ(Put("chunky", "obj", "x")->version, 4u);
  // Delete forgets the version.
  ASSERT_TRUE(store_->Delete("plain", "obj").ok());
  EXPECT_EQ(Put("plain", "obj", "again")->version, 1u);
  ExpectNoLeftovers();
}

TEST_F(StoreTest, ObjectAndDirectoryOfTheSameNameCoexist) {
  for (const char* n : {"a/b/c", "a", "a/b"}) ASSERT_TRUE(Put("plain", n, std::string("data of ") + n).ok()) << n;
  for (const char* n : {"a", "a/b", "a/b/c"}) ExpectObject("plain", n, std::string("data of ") + n);
  ASSERT_TRUE(store_->Delete("plain", "a/b").ok());
  ExpectObject("plain", "a/b/c", "data of a/b/c");
  ExpectObject("plain", "a", "data of a");
}

TEST_F(StoreTest, SizeMismatchIsRejected) {
  PutOptions opts;
  opts.size = 10;
  auto w = store_->BeginPut("plain", "short", opts);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Write("12345", 5).ok());
  ObjectMeta meta;
  EXPECT_EQ((*w)->Commit(&meta).code(), Status::Code::kInvalidArgument);
  w->reset();
  EXPECT_TRUE(store_->Head("plain", "short").status().IsNotFound());

  auto w2 = store_->BeginPut("plain", "long", opts);
  ASSERT_TRUE(w2.ok());
  EXPECT_EQ((*w2)->Write("0123456789x", 11).code(), Status::Code::kInvalidArgument);
  w2->reset();
  EXPECT_TRUE(store_->Head("plain", "long").status().IsNotFound());
  ExpectNoLeftovers();
}

TEST_F(StoreTest, BucketChecksumTypes) {
  const std::string data = Bytes(3000, 4);
  for (const char* type : {"md5", "sha256", "sha512", "xxhash2"}) {
    std::string bucket = std::string("ck-") + type;
    ASSERT_TRUE(store_->CreateBucket(bucket, {{"checksum", {{"type", type}}}}).ok());
    auto put = Put(bucket, "o", data);
    ASSERT_TRUE(put.ok()) << type << ": " << put.status().message();
    EXPECT_EQ(put->cksum_type, type);
    EXPECT_EQ(put->cksum_value, Hash(type, data));
    EXPECT_EQ(store_->Head(bucket, "o")->cksum_value, Hash(type, data));
  }
  ASSERT_TRUE(store_->CreateBucket("ck-none", {{"checksum", {{"type", "none"}}}}).ok());
  PutOptions opts;
  opts.size = data.size();
  opts.client_cksum_type = "xxhash";
  opts.client_cksum_value = "0000000000000000";  // ignored: the bucket does not checksum
  auto put = PutWith("ck-none", "o", data, opts);
  ASSERT_TRUE(put.ok()) << put.status().message();
  EXPECT_EQ(put->cksum_type, "");
  EXPECT_EQ(put->cksum_value, "");
  ExpectObject("ck-none", "o", data);
}

// ---------------------------------------------------------------------------------------------
// Client checksums and aborted writes

TEST_F(StoreTest, ClientChecksumValidated) {
  const std::string data = Bytes(7000, 5);
  for (const char* bucket : {"plain", "chunky"}) {
    // Same type as the bucket, and a different one (computed separately).
    for (const char* type : {"xxhash", "md5", "sha256"}) {
      PutOptions opts;
      opts.size = data.size();
      opts.client_cksum_type = type;
      opts.client_cksum_value = Hash(type, data);
      auto put = PutWith(bucket, std::string("good-") + type, data, opts);
      ASSERT_TRUE(put.ok()) << bucket << " " << type << ": " << put.status().message();
      EXPECT_EQ(put->cksum_type, "xxhash");  // stored in the bucket's type
      EXPECT_EQ(put->cksum_value, Hash("xxhash", data));
    }
  }
  ExpectNoLeftovers();
}

TEST_F(StoreTest, ClientChecksumMismatchStoresNothing) {
  const std::string old_data = Bytes(6000, 6), data = Bytes(7000, 7);
  for (const char* bucket : {"plain", "chunky"}) {
    ASSERT_TRUE(Put(bucket, "existing", old_data).ok());
    for (const char* type : {"xxhash", "md5"}) {
      for (const char* name : {"fresh", "existing"}) {
        PutOptions opts;
        opts.size = data.size();
        opts.client_cksum_type = type;
        opts.client_cksum_value = Hash(type, data + "x");  // the checksum of other bytes
        auto put = PutWith(bucket, name, data, opts);
        ASSERT_FALSE(put.ok()) << bucket << " " << type << " " << name;
        EXPECT_EQ(put.status().code(), Status::Code::kInvalidArgument);
        EXPECT_NE(put.status().message().find("BAD DATA CHECKSUM"), std::string::npos) << put.status().message();
      }
    }
    EXPECT_TRUE(store_->Head(bucket, "fresh").status().IsNotFound()) << bucket;
    auto head = store_->Head(bucket, "existing");
    ASSERT_TRUE(head.ok());
    EXPECT_EQ(head->version, 1u) << bucket;
    ExpectObject(bucket, "existing", old_data);
  }
  ExpectNoLeftovers();
}

TEST_F(StoreTest, BufferedWriterReadsBackAndCommits) {
  // A small object is held in memory; a read-back (a remote write-through) moves it to a file.
  const std::string data = Bytes(5000, 70);
  PutOptions opts;
  opts.size = data.size();
  auto w = store_->BeginPut("plain", "small", opts);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Write(data.data(), data.size()).ok());
  std::vector<UniqueFd> fds;
  std::vector<FileSegment> segs;
  ASSERT_TRUE((*w)->OpenWritten(&fds, &segs).ok());
  std::string back(data.size(), '\0');
  ASSERT_TRUE(ReadSegments(segs, back.data()).ok());
  EXPECT_TRUE(SameBytes(back, data));
  ObjectMeta meta;
  ASSERT_TRUE((*w)->Commit(&meta).ok());
  EXPECT_EQ(meta.size, data.size());
  ExpectObject("plain", "small", data);
  ExpectNoLeftovers();
}

TEST_F(StoreTest, UncommittedWriterLeavesNothingBehind) {
  const std::string old_data = Bytes(5000, 8);
  ASSERT_TRUE(Put("chunky", "existing", old_data).ok());
  // Sizes: 9000 is chunked in "chunky" and held in memory in "plain" (no file before the
  // commit); 200000 streams to a temp file in "plain".
  for (auto [bucket, size] : {std::pair{"plain", 9000}, std::pair{"plain", 200000}, std::pair{"chunky", 9000}}) {
    for (const char* name : {"fresh", "existing"}) {
      PutOptions opts;
      opts.size = size;
      auto w = store_->BeginPut(bucket, name, opts);
      ASSERT_TRUE(w.ok());
      const std::string part = Bytes(4500, 9);
      ASSERT_TRUE((*w)->Write(part.data(), part.size()).ok());
      // A temp file or a chunk marker is there meanwhile, but for a buffered one.
      EXPECT_EQ(WorkEntries().empty(), size <= 64 << 10 && std::string(bucket) == "plain") << bucket << " " << size;
      w->reset();  // the client went away
      ExpectNoLeftovers();
    }
  }
  EXPECT_TRUE(store_->Head("chunky", "fresh").status().IsNotFound());
  ExpectObject("chunky", "existing", old_data);
  EXPECT_EQ(store_->Head("chunky", "existing")->version, 1u);
}

// ---------------------------------------------------------------------------------------------
// Chunked objects

TEST_F(StoreTest, ChunkedPutSpreadsChunksAndReadsBack) {
  const std::string data = Bytes(10000, 10);
  auto put = Put("chunky", "big", data);
  ASSERT_TRUE(put.ok()) << put.status().message();
  ASSERT_TRUE(put->chunked());
  std::vector<uint64_t> want(9, 1024);
  want.push_back(10000 - 9 * 1024);
  EXPECT_EQ(put->chunk_sizes, want);
  EXPECT_EQ(put->max_chunk_size(), 1024u);
  EXPECT_EQ(put->cksum_value, Hash("xxhash", data));

  const Mountpaths& mps = store_->mountpaths();
  std::vector<int> per_mp(mps.size());
  for (uint32_t k = 1; k <= 10; ++k) {
    size_t mp = mps.ForChunk(put->upload_id, k);
    std::string path = mps.ChunkPath(mp, "chunky", put->upload_id, k);
    ASSERT_TRUE(fs::exists(path)) << path;
    EXPECT_EQ(fs::file_size(path), want[k - 1]);
    ++per_mp[mp];
  }
  for (int n : per_mp) EXPECT_GE(n, 2);
  // The object file holds only the header.
  std::string obj = mps.ObjectPath(mps.PrimaryFor("chunky", "big"), "chunky", "big");
  EXPECT_LT(fs::file_size(obj), 4096u);

  auto head = store_->Head("chunky", "big");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->chunk_sizes, want);
  EXPECT_EQ(head->upload_id, put->upload_id);
  ExpectObject("chunky", "big", data);
  ExpectNoLeftovers();
}

TEST_F(StoreTest, SliceAcrossChunkBoundaries) {
  const std::string data = Bytes(10000, 11);
  ASSERT_TRUE(Put("chunky", "big", data).ok());
  auto h = store_->Open("chunky", "big");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->Slice(1000, 100)->size(), 2u);   // 1000..1099 straddles the first boundary
  EXPECT_EQ(h->Slice(1024, 1024)->size(), 1u);  // exactly chunk 2
  EXPECT_EQ(h->Slice(0, 10000)->size(), 10u);
  EXPECT_EQ(h->Slice(1023, 1026)->size(), 3u);
  const std::vector<uint64_t> points = {0, 1, 1023, 1024, 1025, 2047, 2048, 5000, 9215, 9216, 9999, 10000};
  for (uint64_t s : points) {
    for (uint64_t e : points) {
      if (e < s) continue;
      auto got = Read(*h, s, e - s);
      ASSERT_TRUE(got.ok()) << s << ".." << e;
      EXPECT_TRUE(SameBytes(*got, data.substr(s, e - s))) << s << ".." << e;
    }
  }
  std::mt19937_64 rng(12);
  for (int i = 0; i < 300; ++i) {
    uint64_t s = rng() % data.size(), len = rng() % (data.size() - s + 1);
    EXPECT_TRUE(SameBytes(Read(*h, s, len).value(), data.substr(s, len))) << s << "+" << len;
  }
}

TEST_F(StoreTest, ChunkingFollowsBucketProps) {
  // objsize_limit 4KiB: smaller objects stay monolithic; equal or larger are chunked.
  EXPECT_FALSE(Put("chunky", "below", Bytes(4095, 13))->chunked());
  auto at = Put("chunky", "at", Bytes(4096, 14));
  EXPECT_TRUE(at->chunked());
  EXPECT_EQ(at->chunk_sizes, (std::vector<uint64_t>{1024, 1024, 1024, 1024}));
  // Without a known size (chunked transfer encoding) the layout cannot be chosen up front.
  PutOptions unknown;
  const std::string data = Bytes(9000, 15);
  auto put = PutWith("chunky", "unknown-size", data, unknown);
  ASSERT_TRUE(put.ok());
  EXPECT_FALSE(put->chunked());
  ExpectObject("chunky", "unknown-size", data);
  EXPECT_FALSE(Put("plain", "big", Bytes(100000, 16))->chunked());  // default limits
  // Props read back as set; out-of-range ones are refused.
  auto props = store_->GetBucket("chunky");
  ASSERT_TRUE(props.ok());
  EXPECT_EQ(props->objsize_limit, 4096u);
  EXPECT_EQ(props->chunk_size, 1024u);
  EXPECT_EQ(store_->CreateBucket("tiny", {{"chunks", {{"chunk_size", "512B"}}}}).code(),
            Status::Code::kInvalidArgument);  // chunk_size must be >= 1KiB
}

TEST_F(StoreTest, OverwriteAndDeleteDropOldChunks) {
  ASSERT_TRUE(Put("chunky", "o", Bytes(8000, 17)).ok());
  ASSERT_TRUE(Put("chunky", "o", Bytes(9000, 18)).ok());  // chunked over chunked
  ExpectNoLeftovers();
  ASSERT_TRUE(Put("chunky", "o", "tiny").ok());  // monolithic over chunked
  EXPECT_EQ(ChunkDirs("chunky"), std::set<std::string>{});
  ExpectNoLeftovers();
  ASSERT_TRUE(Put("chunky", "o", Bytes(5000, 19)).ok());
  ASSERT_TRUE(store_->Delete("chunky", "o").ok());
  EXPECT_EQ(ChunkDirs("chunky"), std::set<std::string>{});
  ExpectNoLeftovers();
}

TEST_F(StoreTest, OpenHandleSurvivesOverwrite) {
  const std::string v1 = Bytes(5000, 20);
  ASSERT_TRUE(Put("plain", "mono", v1).ok());
  ASSERT_TRUE(Put("chunky", "ch", v1).ok());
  auto mono = store_->Open("plain", "mono");
  auto ch_read = store_->Open("chunky", "ch");
  auto ch_late = store_->Open("chunky", "ch");
  ASSERT_TRUE(mono.ok() && ch_read.ok() && ch_late.ok());
  EXPECT_TRUE(SameBytes(Read(*ch_read, 0, 5000).value(), v1));  // opens every chunk now

  ASSERT_TRUE(Put("plain", "mono", Bytes(100, 21)).ok());
  ASSERT_TRUE(Put("chunky", "ch", Bytes(6000, 22)).ok());
  EXPECT_TRUE(SameBytes(Read(*mono, 0, 5000).value(), v1));     // the fd keeps the old file
  EXPECT_TRUE(SameBytes(Read(*ch_read, 0, 5000).value(), v1));  // chunk fds opened before the overwrite
  auto late = ch_late->Slice(0, 5000);             // its chunks are gone: re-open and retry
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), Status::Code::kConflict);
}

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

// ---------------------------------------------------------------------------------------------
// Multipart upload

class MpuTest : public StoreTest {
 protected:
  Status PutPart(const std::string& name, const std::string& id, uint32_t num, const std::string& data) {
    auto w = store_->MpuPart("plain", name, id, num, data.size());
    if (!w.ok()) return w.status();
    for (size_t off = 0; off < data.size(); off += kPiece) {
      AIS_RETURN_IF_ERROR((*w)->Write(data.data() + off, std::min(kPiece, data.size() - off)));
    }
    return (*w)->Commit();
  }
};

TEST_F(MpuTest, PartsOutOfOrderAndResent) {
  const std::string p1 = Bytes(3000, 30), p2_old = Bytes(100, 31), p2 = Bytes(2000, 32), p3 = Bytes(1500, 33);
  auto id = store_->MpuCreate("plain", "mpu", {{"k", "v"}});
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(PutPart("mpu", *id, 3, p3).ok());
  ASSERT_TRUE(PutPart("mpu", *id, 2, p2_old).ok());
  ASSERT_TRUE(PutPart("mpu", *id, 1, p1).ok());
  ASSERT_TRUE(PutPart("mpu", *id, 2, p2).ok());  // re-sent: replaces the first one
  EXPECT_TRUE(store_->Head("plain", "mpu").status().IsNotFound());  // invisible until complete
  ASSERT_TRUE(store_->MpuComplete("plain", "mpu", *id, {3, 1, 2}).ok());

  const std::string whole = p1 + p2 + p3;
  auto head = store_->Head("plain", "mpu");
  ASSERT_TRUE(head.ok());
  EXPECT_TRUE(head->chunked());
  EXPECT_EQ(head->upload_id, *id);
  EXPECT_EQ(head->chunk_sizes, (std::vector<uint64_t>{3000, 2000, 1500}));
  EXPECT_EQ(head->size, whole.size());
  EXPECT_EQ(head->version, 1u);
  EXPECT_EQ(head->cksum_type, "xxhash");
  EXPECT_EQ(head->cksum_value, Hash("xxhash", whole));
  EXPECT_EQ(head->custom, (std::vector<std::pair<std::string, std::string>>{{"k", "v"}}));
  ExpectObject("plain", "mpu", whole);
  ExpectNoLeftovers();

  // A second upload over it: version 2, the first upload's chunks are dropped.
  auto id2 = store_->MpuCreate("plain", "mpu", {});
  ASSERT_TRUE(id2.ok());
  ASSERT_TRUE(PutPart("mpu", *id2, 1, "second").ok());
  ASSERT_TRUE(store_->MpuComplete("plain", "mpu", *id2, {1}).ok());
  EXPECT_EQ(store_->Head("plain", "mpu")->version, 2u);
  ExpectObject("plain", "mpu", "second");
  ExpectNoLeftovers();
}

TEST_F(MpuTest, KeepOnlyASubsetRenumbersIt) {
  const std::string p[] = {Bytes(1000, 1), Bytes(1100, 2), Bytes(1200, 3), Bytes(1300, 4), Bytes(1400, 5)};
  auto id = store_->MpuCreate("plain", "sub", {});
  ASSERT_TRUE(id.ok());
  for (uint32_t n : {9u, 2u, 5u, 7u, 3u}) ASSERT_TRUE(PutPart("sub", *id, n, p[n % 5]).ok()) << n;
  EXPECT_EQ(store_->MpuKeepOnly("plain", "sub", *id, {5, 3}).code(), Status::Code::kInvalidArgument);  // order
  EXPECT_EQ(store_->MpuKeepOnly("plain", "sub", *id, {3, 4}).code(), Status::Code::kInvalidArgument);  // no part 4
  ASSERT_TRUE(store_->MpuKeepOnly("plain", "sub", *id, {3, 7, 9}).ok());
  auto up = store_->MpuDescribe("plain", "sub", *id);
  ASSERT_TRUE(up.ok());
  ASSERT_EQ(up->parts.size(), 3u);
  EXPECT_EQ(up->parts[0].num, 1u);
  EXPECT_EQ(up->parts[2].num, 3u);
  EXPECT_EQ(up->parts[2].size, p[4].size());  // part 9's
  ASSERT_TRUE(store_->MpuComplete("plain", "sub", *id, {1, 2, 3}).ok());
  ExpectObject("plain", "sub", p[3] + p[2] + p[4]);
  ExpectNoLeftovers();
}

TEST_F(MpuTest, CompleteWithoutPartsIsNoChunks) {
  auto id = store_->MpuCreate("plain", "mpu", {});
  ASSERT_TRUE(id.ok());
  Status st = store_->MpuComplete("plain", "mpu", *id, {});
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("no chunks"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("ais://plain/mpu"), std::string::npos) << st.message();
  ASSERT_TRUE(store_->MpuAbort("plain", "mpu", *id).ok());
  Status gone = store_->MpuAbort("plain", "mpu", *id);
  EXPECT_TRUE(gone.IsNotFound());
  EXPECT_NE(gone.message().find("ais://plain/mpu: upload ID"), std::string::npos) << gone.message();
  ExpectNoLeftovers();
}

TEST_F(MpuTest, CompleteWithWrongListFails) {
  auto id = store_->MpuCreate("plain", "mpu", {});
  ASSERT_TRUE(id.ok());
  for (uint32_t n : {1u, 2u, 3u}) ASSERT_TRUE(PutPart("mpu", *id, n, Bytes(1000 + n, n)).ok());
  EXPECT_EQ(store_->MpuComplete("plain", "mpu", *id, {1, 2}).code(), Status::Code::kNotSupported);  // partial
  EXPECT_EQ(store_->MpuComplete("plain", "mpu", *id, {1, 2, 3, 4}).code(), Status::Code::kNotSupported);
  EXPECT_EQ(store_->MpuComplete("plain", "mpu", *id, {1, 2, 4}).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store_->MpuComplete("plain", "mpu", *id, {1, 1, 2}).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store_->MpuComplete("plain", "mpu", *id, {}).code(), Status::Code::kNotSupported);  // 0 of 3
  EXPECT_TRUE(store_->MpuComplete("plain", "other", *id, {1, 2, 3}).IsNotFound());  // not this object's
  EXPECT_TRUE(store_->MpuComplete("plain", "mpu", "no-such-id", {1, 2, 3}).IsNotFound());
  EXPECT_TRUE(store_->Head("plain", "mpu").status().IsNotFound());
  // The upload is still intact after the failures.
  ASSERT_TRUE(store_->MpuComplete("plain", "mpu", *id, {2, 3, 1}).ok());
  EXPECT_EQ(store_->Head("plain", "mpu")->size, 1001u + 1002u + 1003u);
  EXPECT_TRUE(store_->MpuComplete("plain", "mpu", *id, {1, 2, 3}).IsNotFound());  // already done
  EXPECT_TRUE(store_->MpuAbort("plain", "mpu", *id).IsNotFound());
  ExpectNoLeftovers();
}

TEST_F(MpuTest, BadPartsAreRejected) {
  auto id = store_->MpuCreate("plain", "mpu", {});
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(store_->MpuPart("plain", "mpu", *id, 0, 10).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store_->MpuPart("plain", "mpu", *id, 10000, 10).status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(store_->MpuPart("plain", "mpu", "no-such-id", 1, 10).status().IsNotFound());
  EXPECT_TRUE(store_->MpuPart("plain", "other", *id, 1, 10).status().IsNotFound());
  {
    auto w = store_->MpuPart("plain", "mpu", *id, 1, 10);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ((*w)->Write("0123456789x", 11).code(), Status::Code::kInvalidArgument);  // over its size
    ASSERT_TRUE((*w)->Write("01234", 5).ok());
    EXPECT_EQ((*w)->Commit().code(), Status::Code::kInvalidArgument);  // short
  }  // destroyed uncommitted: its temp file goes
  auto w = store_->MpuPart("plain", "mpu", *id, 9999, 3);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Write("abc", 3).ok());
  ASSERT_TRUE((*w)->Commit().ok());
  const Mountpaths& mps = store_->mountpaths();
  for (const auto& f : Files()) {
    EXPECT_EQ(f.find(".tmp"), std::string::npos) << f;
  }
  EXPECT_TRUE(fs::exists(mps.ChunkPath(mps.ForChunk(*id, 9999), "plain", *id, 9999)));
  // Only part 9999 exists: 1..N does not hold.
  EXPECT_EQ(store_->MpuComplete("plain", "mpu", *id, {9999}).code(), Status::Code::kInvalidArgument);
  ASSERT_TRUE(store_->MpuAbort("plain", "mpu", *id).ok());
  ExpectNoLeftovers();
}

TEST_F(MpuTest, AbortCleansChunkDirs) {
  ASSERT_TRUE(Put("plain", "mpu", "existing").ok());
  auto id = store_->MpuCreate("plain", "mpu", {});
  ASSERT_TRUE(id.ok());
  for (uint32_t n = 1; n <= 8; ++n) ASSERT_TRUE(PutPart("mpu", *id, n, Bytes(500, n)).ok());
  EXPECT_EQ(ChunkDirs("plain").size(), 4u);  // 8 parts round-robin over 4 mountpaths
  EXPECT_FALSE(WorkEntries().empty());       // the upload's marker
  ASSERT_TRUE(store_->MpuAbort("plain", "mpu", *id).ok());
  EXPECT_EQ(ChunkDirs("plain"), std::set<std::string>{});
  ExpectNoLeftovers();
  ExpectObject("plain", "mpu", "existing");  // untouched
  EXPECT_TRUE(store_->MpuPart("plain", "mpu", *id, 9, 1).status().IsNotFound());
  EXPECT_TRUE(store_->MpuComplete("plain", "mpu", *id, {1}).IsNotFound());
  EXPECT_TRUE(store_->MpuAbort("plain", "mpu", *id).IsNotFound());
}

// ---------------------------------------------------------------------------------------------
// Rechunk

TEST_F(StoreTest, RechunkKeepsContentAndVersion) {
  const std::string data = Bytes(5000, 40);
  PutOptions opts;
  opts.size = data.size();
  opts.custom = {{"k", "v"}};
  ASSERT_TRUE(PutWith("plain", "o", data, opts).ok());
  ASSERT_TRUE(PutWith("plain", "o", data, opts).ok());  // version 2
  const ObjectMeta before = store_->Head("plain", "o").value();
  ASSERT_EQ(before.version, 2u);
  ASSERT_FALSE(before.chunked());

  auto expect_same = [&](const ObjectMeta& m) {
    EXPECT_EQ(m.version, before.version);
    EXPECT_EQ(m.size, before.size);
    EXPECT_EQ(m.atime_ns, before.atime_ns);
    EXPECT_EQ(m.cksum_type, before.cksum_type);
    EXPECT_EQ(m.cksum_value, before.cksum_value);
    EXPECT_EQ(m.custom, before.custom);
    ExpectObject("plain", "o", data);
  };

  ASSERT_TRUE(store_->Rechunk("plain", "o", 1024).ok());  // monolithic -> chunked
  const ObjectMeta chunked = store_->Head("plain", "o").value();
  ASSERT_TRUE(chunked.chunked());
  EXPECT_EQ(chunked.chunk_sizes, (std::vector<uint64_t>{1024, 1024, 1024, 1024, 904}));
  expect_same(chunked);
  ExpectNoLeftovers();

  ASSERT_TRUE(store_->Rechunk("plain", "o", 1024).ok());  // same layout: nothing to do
  EXPECT_EQ(store_->Head("plain", "o")->upload_id, chunked.upload_id);

  ASSERT_TRUE(store_->Rechunk("plain", "o", 2048).ok());  // chunked -> other chunks
  const ObjectMeta rechunked = store_->Head("plain", "o").value();
  EXPECT_EQ(rechunked.chunk_sizes, (std::vector<uint64_t>{2048, 2048, 904}));
  EXPECT_NE(rechunked.upload_id, chunked.upload_id);
  expect_same(rechunked);
  ExpectNoLeftovers();

  ASSERT_TRUE(store_->Rechunk("plain", "o", 0).ok());  // chunked -> monolithic
  const ObjectMeta mono = store_->Head("plain", "o").value();
  EXPECT_FALSE(mono.chunked());
  expect_same(mono);
  EXPECT_EQ(ChunkDirs("plain"), std::set<std::string>{});
  ExpectNoLeftovers();

  EXPECT_TRUE(store_->Rechunk("plain", "o", 0).ok());  // already monolithic
  EXPECT_TRUE(store_->Rechunk("plain", "missing", 1024).ok());
  ASSERT_TRUE(Put("plain", "empty", "").ok());
  EXPECT_TRUE(store_->Rechunk("plain", "empty", 1024).ok());
  EXPECT_FALSE(store_->Head("plain", "empty")->chunked());
  EXPECT_EQ(Put("plain", "o", "new")->version, 3u);  // the next write continues the count
}

// ---------------------------------------------------------------------------------------------
// Buckets and restart

TEST_F(StoreTest, BucketsAndObjectsSurviveRestart) {
  const std::string a = Bytes(3000, 50), b = Bytes(6000, 51);
  ASSERT_TRUE(Put("plain", "a", a).ok());
  ASSERT_TRUE(Put("chunky", "b", b).ok());
  Reopen(/*fsync=*/true);  // and exercise the fsync paths from here on
  EXPECT_EQ(store_->buckets().Names(), (std::vector<std::string>{"chunky", "plain"}));
  EXPECT_EQ(store_->GetBucket("chunky")->chunk_size, 1024u);
  ExpectObject("plain", "a", a);
  ExpectObject("chunky", "b", b);
  ASSERT_TRUE(Put("chunky", "b", Bytes(7000, 52)).ok());
  ASSERT_TRUE(Put("chunky", "c", "small").ok());
  ASSERT_TRUE(store_->Delete("plain", "a").ok());
  ExpectNoLeftovers();
  EXPECT_EQ(store_->CreateBucket("plain", nullptr).code(), Status::Code::kAlreadyExists);
}

TEST_F(StoreTest, DestroyBucketRemovesEverything) {
  ASSERT_TRUE(Put("chunky", "b", Bytes(6000, 53)).ok());
  ASSERT_TRUE(Put("chunky", "m", "x").ok());
  ASSERT_TRUE(store_->DestroyBucket("chunky").ok());
  EXPECT_TRUE(store_->DestroyBucket("chunky").IsNotFound());
  EXPECT_TRUE(store_->Head("chunky", "b").status().IsNotFound());
  for (size_t mp = 0; mp < store_->mountpaths().size(); ++mp) {
    EXPECT_FALSE(fs::exists(store_->mountpaths().BucketDir(mp, "chunky")));  // gone at once
  }
  ASSERT_TRUE(store_->CreateBucket("chunky", nullptr).ok());
  EXPECT_EQ(ListNames("chunky", {}), std::vector<std::string>{});
  // The old files may be removed in the background: wait for them, boundedly.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!WorkEntries().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ExpectNoLeftovers();
}

// ---------------------------------------------------------------------------------------------
// Crash recovery

// Copies the mountpaths as they are this instant: what a kill -9 would leave on disk.
std::vector<std::string> Snapshot(const std::vector<std::string>& paths, const std::string& dest) {
  std::vector<std::string> out;
  for (size_t i = 0; i < paths.size(); ++i) {
    out.push_back(dest + "/mp" + std::to_string(i + 1));
    fs::create_directories(out.back());
    fs::copy(paths[i], out.back(), fs::copy_options::recursive);
  }
  return out;
}

size_t CountEntries(const std::string& dir) {
  if (!fs::exists(dir)) return 0;
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

// Puts a snapshot back in place of the mountpaths. Placement hashes the mountpath paths, so the
// store must see the copies under the original names.
void Restore(const std::vector<std::string>& copies, const std::vector<std::string>& paths) {
  for (size_t i = 0; i < paths.size(); ++i) {
    fs::remove_all(paths[i]);
    fs::rename(copies[i], paths[i]);
  }
}

TEST_F(StoreTest, RecoveryAfterCrashMidWrite) {
  const std::string keep_mono = Bytes(3000, 60), keep_chunked = Bytes(9000, 61);
  ASSERT_TRUE(Put("plain", "keep-mono", keep_mono).ok());
  ASSERT_TRUE(Put("chunky", "keep-chunked", keep_chunked).ok());
  ASSERT_TRUE(Put("chunky", "keep/nested", keep_mono).ok());

  test::TempDir crash;
  std::vector<std::string> copies;
  std::string mpu_id;
  {
    // In flight at the moment of the crash:
    const std::string half = Bytes(3000, 62);
    PutOptions opts;
    opts.size = 9000;
    auto new_chunked = store_->BeginPut("chunky", "inflight-chunked", opts);
    auto over_chunked = store_->BeginPut("chunky", "keep-chunked", opts);  // an overwrite
    PutOptions streamed;  // above what a writer keeps in memory: a temp file from the start
    streamed.size = 200000;
    auto new_mono = store_->BeginPut("plain", "inflight-mono", streamed);
    auto over_mono = store_->BeginPut("plain", "keep-mono", streamed);
    for (auto* w : {&new_chunked, &over_chunked, &new_mono, &over_mono}) {
      ASSERT_TRUE(w->ok());
      ASSERT_TRUE((**w)->Write(half.data(), half.size()).ok());
    }
    auto mpu = store_->MpuCreate("plain", "inflight-mpu", {});
    ASSERT_TRUE(mpu.ok());
    mpu_id = *mpu;
    for (uint32_t n = 1; n <= 3; ++n) {
      auto part = store_->MpuPart("plain", "inflight-mpu", mpu_id, n, 100);
      ASSERT_TRUE(part.ok());
      ASSERT_TRUE((*part)->Write(half.data(), 100).ok());
      ASSERT_TRUE((*part)->Commit().ok());
    }
    auto open_part = store_->MpuPart("plain", "inflight-mpu", mpu_id, 4, 100);
    ASSERT_TRUE(open_part.ok());
    ASSERT_TRUE((*open_part)->Write(half.data(), 50).ok());

    copies = Snapshot(paths_, crash.path());
  }  // the writers clean up after themselves, but not in the snapshot
  // The snapshot holds the debris: markers of the two chunked writers and of the upload, temp files
  // of the two monolithic writers; chunk dirs of both chunked writers and of the upload's parts.
  size_t work = 0, chunky_dirs = 0, plain_dirs = 0;
  for (const auto& mp : copies) {
    work += CountEntries(mp + "/.ais.work");
    chunky_dirs += CountEntries(mp + "/ais/chunky/%ch");
    plain_dirs += CountEntries(mp + "/ais/plain/%ch");
  }
  EXPECT_EQ(work, 5u);
  EXPECT_EQ(chunky_dirs, 4u + 3u + 3u);  // keep-chunked (9 chunks) and two writers at 3 chunks each
  EXPECT_EQ(plain_dirs, 4u);             // parts 1..4
  store_.reset();
  Restore(copies, paths_);
  Reopen();

  EXPECT_TRUE(store_->Head("chunky", "inflight-chunked").status().IsNotFound());
  EXPECT_TRUE(store_->Head("plain", "inflight-mono").status().IsNotFound());
  EXPECT_TRUE(store_->Head("plain", "inflight-mpu").status().IsNotFound());
  ExpectObject("plain", "keep-mono", keep_mono);
  ExpectObject("chunky", "keep-chunked", keep_chunked);
  ExpectObject("chunky", "keep/nested", keep_mono);
  EXPECT_EQ(store_->Head("chunky", "keep-chunked")->version, 1u);
  ExpectNoLeftovers();
  // The upload died with the process.
  EXPECT_TRUE(store_->MpuComplete("plain", "inflight-mpu", mpu_id, {1, 2, 3}).IsNotFound());
}

TEST_F(StoreTest, RecoveryAfterCrashBetweenCommitAndChunkRemoval) {
  // Overwrite and delete of a chunked object: the marker for the old upload is written, the object
  // file replaced or removed, and the crash comes before the old chunks are gone.
  const Mountpaths& mps = store_->mountpaths();
  test::TempDir aside;
  auto save_chunks = [&](const ObjectMeta& m) {
    for (size_t mp = 0; mp < mps.size(); ++mp) {
      std::string dir = mps.ChunkDir(mp, "chunky", m.upload_id);
      if (!fs::exists(dir)) continue;
      fs::copy(dir, aside.Sub(std::to_string(mp) + "-" + m.upload_id), fs::copy_options::recursive);
    }
  };
  auto restore_chunks = [&](const ObjectMeta& m) {
    size_t restored = 0;
    for (size_t mp = 0; mp < mps.size(); ++mp) {
      std::string saved = aside.Sub(std::to_string(mp) + "-" + m.upload_id);
      if (!fs::exists(saved)) continue;
      fs::copy(saved, mps.ChunkDir(mp, "chunky", m.upload_id), fs::copy_options::recursive);
      ++restored;
    }
    EXPECT_GT(restored, 0u);
    nlohmann::json marker = {{"bucket", "chunky"}, {"name", m.name}};
    std::ofstream(mps.WorkDir(mps.PrimaryFor("chunky", m.name)) + "/chunks-" + m.upload_id) << marker.dump();
  };

  auto old_over = Put("chunky", "overwritten", Bytes(6000, 70));
  auto old_del = Put("chunky", "deleted", Bytes(6000, 71));
  ASSERT_TRUE(old_over.ok() && old_del.ok());
  save_chunks(*old_over);
  save_chunks(*old_del);
  const std::string now = Bytes(7000, 72);
  ASSERT_TRUE(Put("chunky", "overwritten", now).ok());
  ASSERT_TRUE(store_->Delete("chunky", "deleted").ok());
  restore_chunks(*old_over);
  restore_chunks(*old_del);
  EXPECT_EQ(ChunkDirs("chunky").size(), 4u + 4u + 4u);  // 7, 6 and 6 chunks over four mountpaths

  Reopen();
  ExpectObject("chunky", "overwritten", now);
  EXPECT_EQ(store_->Head("chunky", "overwritten")->version, 2u);
  EXPECT_TRUE(store_->Head("chunky", "deleted").status().IsNotFound());
  ExpectNoLeftovers();
}

TEST_F(StoreTest, RecoveryOfHandCraftedDebris) {
  const std::string kept = Bytes(6000, 80);
  auto committed = Put("chunky", "committed", kept);
  ASSERT_TRUE(committed.ok());
  const Mountpaths mps = store_->mountpaths();  // a copy: the store is reopened below
  auto write = [](const std::string& path, const std::string& content) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << content;
  };
  auto marker = [](const std::string& bucket, const std::string& name) {
    return nlohmann::json{{"bucket", bucket}, {"name", name}}.dump();
  };
  // A crash just before the committed object's own marker was removed: its chunks must stay.
  write(mps.WorkDir(0) + "/chunks-" + committed->upload_id, marker("chunky", "committed"));
  // An orphan upload with chunks on two mountpaths and its marker on a third.
  write(mps.ChunkPath(1, "chunky", "orphan01", 1), "x");
  write(mps.ChunkPath(3, "chunky", "orphan01", 2), "y");
  write(mps.ChunkPath(3, "chunky", "orphan01", 3) + ".Xy12.tmp", "part in flight");
  write(mps.WorkDir(2) + "/chunks-orphan01", marker("chunky", "never-committed"));
  // An orphan upload of a bucket destroyed meanwhile (its chunks went with the bucket).
  write(mps.WorkDir(1) + "/chunks-gone01", marker("destroyed", "x"));
  // Torn markers: empty, not JSON, JSON without the fields, and one mid-AtomicWriteFile.
  write(mps.WorkDir(0) + "/chunks-torn1", "");
  write(mps.WorkDir(0) + "/chunks-torn2", "{\"buck");
  write(mps.WorkDir(1) + "/chunks-torn3", "[1,2]");
  write(mps.WorkDir(2) + "/chunks-torn4.tmp.12345", marker("chunky", "committed"));
  // Temp files of PUTs, trash of a destroyed bucket, an interrupted BMD write.
  write(mps.WorkDir(3) + "/AbCdEf0123456789.tmp", std::string(5000, 'z'));
  write(mps.WorkDir(0) + "/trash-abcdefabcdef/ais/%ob/deep\x01/file", "old");
  write(mps.paths()[2] + "/.ais.bmd.json.tmp.987654", "{");

  Reopen();
  ExpectObject("chunky", "committed", kept);
  EXPECT_FALSE(fs::exists(mps.ChunkDir(1, "chunky", "orphan01")));
  EXPECT_FALSE(fs::exists(mps.ChunkDir(3, "chunky", "orphan01")));
  ExpectNoLeftovers();
}

}  // namespace
}  // namespace ais

namespace ais {
namespace {

TEST_F(StoreTest, NodeIdentityPersistsAcrossRestarts) {
  const std::string uuid = store_->cluster_uuid(), id = store_->daemon_id();
  EXPECT_EQ(uuid.size(), 10u);
  EXPECT_EQ(id.size(), 8u);
  Reopen();
  EXPECT_EQ(store_->cluster_uuid(), uuid);
  EXPECT_EQ(store_->daemon_id(), id);
}

}  // namespace
}  // namespace ais
