// MultipartUploads through the Store: parts in any order, subsets, bad part lists, abort.
#include <gtest/gtest.h>

#include "store/store_fixture.h"

namespace ais::store_test {
namespace {

namespace fs = std::filesystem;

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
  EXPECT_EQ(head->cksum_type, "xxhash2");
  EXPECT_EQ(head->cksum_value, Hash("xxhash2", whole));
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

}  // namespace
}  // namespace ais::store_test
