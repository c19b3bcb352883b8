// Store: the object life cycle on four mountpaths (PUT, GET, HEAD, DELETE), client checksums,
// chunked objects, buckets across a restart (docs/storage-format.md).
#include <gtest/gtest.h>

#include <fstream>

#include "store/store_fixture.h"

namespace ais::store_test {
namespace {

namespace fs = std::filesystem;

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
  EXPECT_EQ(put->cksum_type, "xxhash2");
  EXPECT_EQ(put->cksum_value, Hash("xxhash2", data));
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
// A namespace's bucket (bck.h key "ais/@#ns/b") beside the global one of the same name: its own
// directory and objects, across a restart; the cleanup keeps it (and a remote cluster's) and
// removes a namespaced directory no bucket owns.
TEST_F(StoreTest, NamespacedBucketsAreBucketsOfTheirOwn) {
  const std::string ns = BucketKey("ais", BucketNs{.uuid = "", .name = "ns"}, "plain");
  const std::string remote = BucketKey("ais", BucketNs{.uuid = "U1", .name = ""}, "plain");
  ASSERT_TRUE(store_->CreateBucket(ns, nullptr).ok());
  ASSERT_TRUE(store_->CreateBucket(remote, nullptr).ok());
  ASSERT_TRUE(Put(ns, "o", Bytes(3000, 3)).ok());
  ASSERT_TRUE(Put(remote, "o", Bytes(2000, 2)).ok());
  ASSERT_TRUE(Put("plain", "o", Bytes(1000, 1)).ok());
  EXPECT_EQ(store_->mountpaths().BucketDir(0, ns), paths_[0] + "/ais/@#ns/plain");
  const std::string orphan = paths_[0] + "/ais/@#gone/x/%ob";
  fs::create_directories(orphan);
  std::ofstream(orphan + "/f") << "left over";
  Reopen();
  uint64_t removed = 0;
  ASSERT_TRUE(store_->RemoveLeftovers(std::chrono::seconds(0), [] { return false; }, [&](uint64_t) { ++removed; }).ok());
  EXPECT_EQ(removed, 1u);
  EXPECT_FALSE(fs::exists(paths_[0] + "/ais/@#gone/x"));
  ExpectObject(ns, "o", Bytes(3000, 3));
  ExpectObject(remote, "o", Bytes(2000, 2));
  ExpectObject("plain", "o", Bytes(1000, 1));
  EXPECT_EQ(ListNames(ns, ListQuery{.prefix = "", .after = "", .limit = 10}), std::vector<std::string>{"o"});
  ASSERT_TRUE(store_->DestroyBucket(ns).ok());
  ExpectObject("plain", "o", Bytes(1000, 1));
}

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
    // Same type as the bucket, its same-digest twin, and others (computed separately).
    for (const char* type : {"xxhash2", "xxhash", "md5", "sha256"}) {
      PutOptions opts;
      opts.size = data.size();
      opts.client_cksum_type = type;
      opts.client_cksum_value = Hash(type, data);
      auto put = PutWith(bucket, std::string("good-") + type, data, opts);
      ASSERT_TRUE(put.ok()) << bucket << " " << type << ": " << put.status().message();
      EXPECT_EQ(put->cksum_type, "xxhash2");  // stored in the bucket's type
      EXPECT_EQ(put->cksum_value, Hash("xxhash2", data));
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

}  // namespace
}  // namespace ais::store_test
