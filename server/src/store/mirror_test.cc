// The n-way mirror (store/mirror.h): where copies go, that they follow every change of their
// object, and that reads fall over to a copy when the object file is lost or damaged.
#include "store/mirror.h"

#include "store/store_fixture.h"

namespace ais::store_test {
namespace {

TEST(MirrorSlots, AreTheNextEnabledMountpathsInRankingOrder) {
  Mountpaths mps({"/a", "/b", "/c", "/d"});
  for (int i = 0; i < 200; ++i) {
    const std::string name = "obj-" + std::to_string(i);
    const auto ranked = mps.Ranked("bkt", name);
    const size_t primary = mps.PrimaryFor("bkt", name);
    EXPECT_EQ(mps.MirrorSlots("bkt", name, primary, 1), std::vector<size_t>{});
    EXPECT_EQ(mps.MirrorSlots("bkt", name, primary, 3), (std::vector<size_t>{ranked[1], ranked[2]}));
    EXPECT_EQ(mps.MirrorSlots("bkt", name, primary, 4), (std::vector<size_t>{ranked[1], ranked[2], ranked[3]}));
    // More copies than mountpaths: every other one, once.
    EXPECT_EQ(mps.MirrorSlots("bkt", name, primary, 9).size(), 3u);
    // An object off its first choice: the slots leave out the mountpath it is on.
    auto off = mps.MirrorSlots("bkt", name, ranked[2], 3);
    EXPECT_EQ(off, (std::vector<size_t>{ranked[0], ranked[1]}));
  }
}

TEST(MirrorSlots, SkipDisabledMountpaths) {
  Mountpaths mps({"/a", "/b", "/c", "/d"});
  const auto ranked = mps.Ranked("bkt", "x");
  mps.SetEnabled(ranked[1], false);
  EXPECT_EQ(mps.MirrorSlots("bkt", "x", ranked[0], 3), (std::vector<size_t>{ranked[2], ranked[3]}));
  // Its first choice disabled as well: the object goes to ranked[2], its copy to ranked[3].
  mps.SetEnabled(ranked[0], false);
  EXPECT_EQ(mps.PrimaryFor("bkt", "x"), ranked[2]);
  EXPECT_EQ(mps.MirrorSlots("bkt", "x", ranked[2], 2), (std::vector<size_t>{ranked[3]}));
}

class MirrorTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ASSERT_TRUE(store_->CreateBucket("m", nlohmann::json::parse(R"({"mirror":{"enabled":true,"copies":2}})")).ok());
    ASSERT_TRUE(store_->CreateBucket("mc", nlohmann::json::parse(
        R"({"mirror":{"enabled":true,"copies":3},"chunks":{"objsize_limit":"4KiB","chunk_size":"1KiB"}})")).ok());
  }
  const Mountpaths& mps() const { return store_->mountpaths(); }
  size_t Primary(const std::string& b, const std::string& n) const { return mps().PrimaryFor(b, n); }
  // The mountpaths holding a copy file of b/n.
  std::vector<size_t> CopiesOn(const std::string& b, const std::string& n) const {
    std::vector<size_t> out;
    for (size_t mp = 0; mp < mps().size(); ++mp) {
      if (::access(mps().MirrorPath(mp, b, n).c_str(), F_OK) == 0) out.push_back(mp);
    }
    return out;
  }
  std::vector<size_t> Slots(const std::string& b, const std::string& n, size_t copies) const {
    auto s = mps().MirrorSlots(b, n, Primary(b, n), copies);
    std::sort(s.begin(), s.end());
    return s;
  }
  // The copy of b/n on mp, as a reader would open it.
  Result<ObjectMeta> CopyHeader(const std::string& b, const std::string& n, size_t mp) const {
    auto fd = OpenFile(mps().MirrorPath(mp, b, n), O_RDONLY);
    if (!fd.ok()) return fd.status();
    uint64_t off = 0;
    return ReadObjectHeader(fd->get(), &off);
  }
  void WaitRepairs(uint64_t n) {
    for (int i = 0; i < 500 && store_->repairs_done() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_GE(store_->repairs_done(), n);
  }
};

TEST_F(MirrorTest, CopiesAreWrittenWithTheObjectOnTheirSlots) {
  const std::string small = Bytes(1000, 1), big = Bytes(10000, 2);
  ASSERT_TRUE(Put("m", "a/small", small).ok());
  ASSERT_TRUE(Put("mc", "big", big).ok());
  EXPECT_EQ(CopiesOn("m", "a/small"), Slots("m", "a/small", 2));
  EXPECT_EQ(CopiesOn("mc", "big"), Slots("mc", "big", 3));
  // A chunked object's copies are whole: monolithic, same version and checksum.
  auto h = store_->Head("mc", "big");
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(h->chunked());
  for (size_t mp : CopiesOn("mc", "big")) {
    auto c = CopyHeader("mc", "big", mp);
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_FALSE(c->chunked());
    EXPECT_EQ(c->size, big.size());
    EXPECT_EQ(c->version, h->version);
    EXPECT_EQ(c->cksum_value, h->cksum_value);
  }
  // Its chunks live with its object file, so one lost disk never takes a chunk and a copy.
  const std::string own_dir = mps().ChunkDir(Primary("mc", "big"), "mc", h->upload_id);
  for (const auto& dir : ChunkDirs("mc")) EXPECT_EQ(dir, own_dir);
  // Not mirrored: no copy anywhere.
  ASSERT_TRUE(Put("plain", "p", small).ok());
  EXPECT_EQ(CopiesOn("plain", "p"), std::vector<size_t>{});
  // A listing shows each object once.
  ListQuery q;
  EXPECT_EQ(ListNames("m", q), std::vector<std::string>{"a/small"});
  EXPECT_EQ(ListNames("mc", q), std::vector<std::string>{"big"});
}

TEST_F(MirrorTest, AMultipartObjectKeepsItsPartsWithItsFileAndIsCopied) {
  auto id = store_->MpuCreate("m", "mpu", {});
  ASSERT_TRUE(id.ok());
  std::string whole;
  for (uint32_t num = 1; num <= 3; ++num) {
    const std::string part = Bytes(2000 + num, num);
    auto w = store_->MpuPart("m", "mpu", *id, num, part.size());
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_TRUE((*w)->Write(part.data(), part.size()).ok());
    ASSERT_TRUE((*w)->Commit().ok());
    whole += part;
  }
  ASSERT_TRUE(store_->MpuComplete("m", "mpu", *id, {1, 2, 3}).ok());
  for (const auto& dir : ChunkDirs("m")) EXPECT_EQ(dir, mps().ChunkDir(Primary("m", "mpu"), "m", *id));
  EXPECT_EQ(CopiesOn("m", "mpu"), Slots("m", "mpu", 2));
  ExpectObject("m", "mpu", whole);
}

TEST_F(MirrorTest, CopiesFollowOverwriteAndDelete) {
  ASSERT_TRUE(Put("mc", "o", Bytes(100, 1)).ok());
  ASSERT_TRUE(Put("mc", "o", Bytes(9000, 2)).ok());  // now chunked
  auto h = store_->Head("mc", "o");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->version, 2u);
  for (size_t mp : CopiesOn("mc", "o")) {
    auto c = CopyHeader("mc", "o", mp);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->version, 2u);
    EXPECT_EQ(c->size, 9000u);
  }
  EXPECT_EQ(CopiesOn("mc", "o").size(), 2u);
  ASSERT_TRUE(store_->Delete("mc", "o").ok());
  EXPECT_EQ(CopiesOn("mc", "o"), std::vector<size_t>{});
  EXPECT_TRUE(store_->Head("mc", "o").status().IsNotFound());
}

TEST_F(MirrorTest, ReadFallsOverToACopyAndTheObjectIsRestored) {
  const std::string data = Bytes(5000, 3);
  ASSERT_TRUE(Put("m", "lost", data).ok());
  ASSERT_TRUE(Put("m", "garbled", data).ok());
  ASSERT_TRUE(Put("mc", "chunk-lost", Bytes(9000, 4)).ok());
  // The object file gone (its disk lost it).
  const std::string lost = mps().ObjectPath(Primary("m", "lost"), "m", "lost");
  ASSERT_EQ(::unlink(lost.c_str()), 0);
  // A header that does not parse.
  const std::string garbled = mps().ObjectPath(Primary("m", "garbled"), "m", "garbled");
  {
    UniqueFd fd(::open(garbled.c_str(), O_WRONLY));
    ASSERT_TRUE(PwriteAll(fd.get(), "XXXXXXXX", 8, 0).ok());
  }
  // One chunk of a chunked object gone.
  auto meta = store_->Head("mc", "chunk-lost");
  ASSERT_TRUE(meta.ok());
  ASSERT_EQ(::unlink(mps().ChunkPath(Primary("mc", "chunk-lost"), "mc", meta->upload_id, 2).c_str()), 0);

  ExpectObject("m", "lost", data);
  ExpectObject("m", "garbled", data);
  ExpectObject("mc", "chunk-lost", Bytes(9000, 4));
  WaitRepairs(3);
  // Restored, from a copy, as the object file on its mountpath; the copies are back on their slots.
  EXPECT_EQ(::access(lost.c_str(), F_OK), 0);
  for (const char* n : {"lost", "garbled"}) {
    auto h = store_->Head("m", n);
    ASSERT_TRUE(h.ok()) << n << ": " << h.status().message();
    EXPECT_EQ(CopiesOn("m", n), Slots("m", n, 2)) << n;
  }
  ExpectObject("m", "garbled", data);
  ExpectObject("mc", "chunk-lost", Bytes(9000, 4));
  EXPECT_EQ(CopiesOn("mc", "chunk-lost"), Slots("mc", "chunk-lost", 3));
  // The damaged chunked object's other chunks went with it.
  for (const auto& dir : ChunkDirs("mc")) EXPECT_EQ(dir.find(meta->upload_id), std::string::npos) << dir;
  // A listing still shows each once.
  ListQuery q;
  EXPECT_EQ(ListNames("m", q), (std::vector<std::string>{"garbled", "lost"}));
}

TEST_F(MirrorTest, AnObjectWhoseFileIsLostIsListedByItsCopyAndCanBeDeleted) {
  ASSERT_TRUE(Put("m", "x", Bytes(10, 1)).ok());
  ASSERT_EQ(::unlink(mps().ObjectPath(Primary("m", "x"), "m", "x").c_str()), 0);
  ListQuery q;
  EXPECT_EQ(ListNames("m", q), std::vector<std::string>{"x"});
  ASSERT_TRUE(store_->Delete("m", "x").ok());
  EXPECT_EQ(CopiesOn("m", "x"), std::vector<size_t>{});
  EXPECT_EQ(ListNames("m", q), std::vector<std::string>{});
  EXPECT_TRUE(store_->Head("m", "x").status().IsNotFound());
}

TEST_F(MirrorTest, AChecksumMismatchIsServedFromAGoodCopy) {
  const std::string data = Bytes(3000, 5);
  ASSERT_TRUE(Put("m", "flip", data).ok());
  const std::string path = mps().ObjectPath(Primary("m", "flip"), "m", "flip");
  {
    UniqueFd fd(::open(path.c_str(), O_RDWR));
    char c = 0;
    ASSERT_TRUE(PreadAll(fd.get(), &c, 1, kDataAlign + 100).ok());
    c = static_cast<char>(c ^ 0x5a);
    ASSERT_TRUE(PwriteAll(fd.get(), &c, 1, kDataAlign + 100).ok());
  }
  auto h = store_->Open("m", "flip");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->VerifyChecksum().code(), Status::Code::kCorruption);
  auto good = store_->OpenGoodCopy("m", "flip", *h);
  ASSERT_TRUE(good.ok()) << good.status().message();
  auto got = Read(*good, 0, good->size());
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(SameBytes(*got, data));
  // Not mirrored: nothing to fall over to.
  ASSERT_TRUE(Put("plain", "p", data).ok());
  auto p = store_->Open("plain", "p");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(store_->OpenGoodCopy("plain", "p", *p).status().IsNotFound());
}

TEST_F(MirrorTest, SyncCopiesAddsAndTrims) {
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(Put("plain", "o" + std::to_string(i), Bytes(100 + i, i)).ok());
  ASSERT_TRUE(store_->UpdateBucket("plain", nlohmann::json::parse(R"({"mirror":{"enabled":true,"copies":3}})")).ok());
  for (int i = 0; i < 20; ++i) {
    const std::string n = "o" + std::to_string(i);
    size_t written = 0;
    ASSERT_TRUE(store_->SyncCopies("plain", n, 3, &written).ok());
    EXPECT_EQ(written, 2u);
    EXPECT_EQ(CopiesOn("plain", n), Slots("plain", n, 3));
    ASSERT_TRUE(store_->SyncCopies("plain", n, 3, &written).ok());
    EXPECT_EQ(written, 0u) << "already in step";
  }
  for (int i = 0; i < 20; ++i) {
    const std::string n = "o" + std::to_string(i);
    ASSERT_TRUE(store_->SyncCopies("plain", n, 2).ok());
    EXPECT_EQ(CopiesOn("plain", n), Slots("plain", n, 2));
    ASSERT_TRUE(store_->SyncCopies("plain", n, 1).ok());
    EXPECT_EQ(CopiesOn("plain", n), std::vector<size_t>{});
    ExpectObject("plain", n, Bytes(100 + i, i));
  }
  EXPECT_TRUE(store_->SyncCopies("plain", "nope", 2).IsNotFound());
}

TEST_F(MirrorTest, MoreCopiesThanMountpathsAreRefused) {
  Status st = store_->UpdateBucket("m", nlohmann::json::parse(R"({"mirror":{"enabled":true,"copies":5}})"));
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("mirror.copies"), std::string::npos) << st.message();
  st = store_->CreateBucket("m5", nlohmann::json::parse(R"({"mirror":{"enabled":true,"copies":5}})"));
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(store_->buckets().Get("m5"));
}

TEST_F(MirrorTest, CleanupLeavesCopiesAlone) {
  ASSERT_TRUE(Put("mc", "c", Bytes(9000, 9)).ok());
  auto never = [] { return false; };
  uint64_t removed = 0;
  auto count = [&removed](uint64_t) { ++removed; };
  ASSERT_TRUE(store_->RemoveOrphanedChunks(std::chrono::seconds(0), never, count).ok());
  ASSERT_TRUE(store_->RemoveLeftovers(std::chrono::seconds(0), never, count).ok());
  ASSERT_TRUE(store_->RemoveStaleTemps(std::chrono::seconds(0), never, count).ok());
  EXPECT_EQ(removed, 0u);
  EXPECT_EQ(CopiesOn("mc", "c").size(), 2u);
  ExpectObject("mc", "c", Bytes(9000, 9));
}

TEST_F(MirrorTest, EvictionRemovesEveryCopy) {
  ASSERT_TRUE(Put("m", "e", Bytes(100, 1)).ok());
  auto h = store_->Head("m", "e");
  ASSERT_TRUE(h.ok());
  uint64_t bytes = 0;
  ASSERT_TRUE(store_->Evict("m", "e", h->version, store_->AccessTime("m", *h), &bytes).ok());
  EXPECT_EQ(CopiesOn("m", "e"), std::vector<size_t>{});
}

}  // namespace
}  // namespace ais::store_test
