// Rewriter through the Store: rechunk keeps content and version.
#include <gtest/gtest.h>

#include "store/store_fixture.h"

namespace ais::store_test {
namespace {

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

}  // namespace
}  // namespace ais::store_test
