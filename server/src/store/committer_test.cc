// Committer: crash recovery, from snapshots of the mountpaths taken mid-write (what a kill -9
// leaves) and from hand-crafted debris (docs/storage-format.md).
#include <gtest/gtest.h>

#include "store/store_fixture.h"

namespace ais::store_test {
namespace {

namespace fs = std::filesystem;

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
  const Mountpaths mps(store_->mountpaths().paths());  // its own: the store is reopened below
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
}  // namespace ais::store_test
