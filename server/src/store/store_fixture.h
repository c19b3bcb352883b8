// The store tests' fixture: a Store on four real mountpaths in a temp dir, two buckets ("plain"
// and "chunky": chunked above 4 KiB in 1 KiB chunks), and helpers to put, read, list and look at
// the files on disk. Included by the store/*_test.cc files only.
#pragma once

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

namespace ais::store_test {


inline constexpr size_t kPiece = 333;  // writes straddle chunk boundaries
inline constexpr const char* kChunkedProps = R"({"chunks":{"objsize_limit":"4KiB","chunk_size":"1KiB"}})";

inline std::string Bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// Compares object bytes without dumping kilobytes of binary into the test log.
inline ::testing::AssertionResult SameBytes(const std::string& got, const std::string& want) {
  if (got == want) return ::testing::AssertionSuccess();
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  return ::testing::AssertionFailure() << "got " << got.size() << " bytes, want " << want.size()
                                       << "; first difference at byte " << i;
}

inline std::string Hash(const std::string& type, const std::string& data) {
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
      for (const auto& e : std::filesystem::recursive_directory_iterator(mp)) {
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
      if (!std::filesystem::exists(ch)) continue;
      for (const auto& e : std::filesystem::directory_iterator(ch)) out.insert(e.path().string());
    }
    return out;
  }
  std::set<std::string> WorkEntries() const {
    std::set<std::string> out;
    const Mountpaths& mps = store_->mountpaths();
    for (size_t mp = 0; mp < mps.size(); ++mp) {
      for (const auto& e : std::filesystem::directory_iterator(mps.WorkDir(mp))) out.insert(e.path().string());
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
      want_files.insert(mps.path(mp) + "/.ais.vmd.json");  // the node's identity and mountpath state
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


}  // namespace ais::store_test
