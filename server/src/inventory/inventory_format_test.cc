#include "inventory/inventory_format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ais {
namespace {

std::string EncodeNames(const std::vector<std::string>& names, std::string* hash) {
  InventoryChunkEncoder enc;
  for (auto& n : names) enc.Add(n, "entry:" + n);
  EXPECT_EQ(enc.count(), names.size());
  if (!names.empty()) {
    EXPECT_EQ(enc.first(), names.front());
    EXPECT_EQ(enc.last(), names.back());
  }
  return enc.Finish(hash);
}

TEST(InventoryFormatTest, ChunkRoundTrip) {
  std::vector<std::string> names = {"a", "a-c", "a/b", std::string("bin\0ary", 7), "z", std::string(300, 'x')};
  std::string hash;
  std::string raw = EncodeNames(names, &hash);
  EXPECT_EQ(hash.size(), 16u);
  auto chunk = DecodeInventoryChunk(raw);
  ASSERT_TRUE(chunk.ok()) << chunk.status().message();
  ASSERT_EQ(chunk->entries.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(chunk->entries[i].first, names[i]);
    EXPECT_EQ(chunk->entries[i].second, "entry:" + names[i]);
  }
}

TEST(InventoryFormatTest, EncoderResetsAfterFinish) {
  InventoryChunkEncoder enc;
  enc.Add("one", "1");
  std::string h1, h2;
  enc.Finish(&h1);
  EXPECT_EQ(enc.count(), 0u);
  enc.Add("two", "2");
  auto chunk = DecodeInventoryChunk(enc.Finish(&h2));
  ASSERT_TRUE(chunk.ok());
  ASSERT_EQ(chunk->entries.size(), 1u);
  EXPECT_EQ(chunk->entries[0].first, "two");
  EXPECT_NE(h1, h2);
}

TEST(InventoryFormatTest, EmptyChunkDecodes) {
  std::string hash;
  auto chunk = DecodeInventoryChunk(EncodeNames({}, &hash));
  ASSERT_TRUE(chunk.ok());
  EXPECT_TRUE(chunk->entries.empty());
}

TEST(InventoryFormatTest, EveryFlippedByteIsDetected) {
  std::string hash;
  const std::string raw = EncodeNames({"alpha", "beta", "gamma"}, &hash);
  for (size_t i = 0; i < raw.size(); ++i) {
    std::string bad = raw;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    auto chunk = DecodeInventoryChunk(bad);
    EXPECT_FALSE(chunk.ok()) << "flip at byte " << i << " went unnoticed";
    if (!chunk.ok()) {
      EXPECT_EQ(chunk.status().code(), Status::Code::kCorruption);
    }
  }
}

TEST(InventoryFormatTest, TruncationIsDetected) {
  std::string hash;
  const std::string raw = EncodeNames({"alpha", "beta"}, &hash);
  for (size_t len = 0; len < raw.size(); ++len) {
    EXPECT_FALSE(DecodeInventoryChunk(raw.substr(0, len)).ok()) << "truncated to " << len;
  }
}

TEST(InventoryFormatTest, IndexJsonRoundTrip) {
  InventoryIndex idx;
  idx.prefix = "train/";
  idx.props = "name,size,cached";
  idx.started = 1;
  idx.finished = 2;
  idx.ntotal = 3;
  idx.names_per_chunk = 2;
  idx.chunks = {{"a", "b", 2, "00ff00ff00ff00ff"}, {"c", "c", 1, "1234567890abcdef"}};
  auto back = InventoryIndex::FromJson(idx.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->prefix, idx.prefix);
  EXPECT_EQ(back->props, idx.props);
  EXPECT_EQ(back->ntotal, 3u);
  ASSERT_EQ(back->chunks.size(), 2u);
  EXPECT_EQ(back->chunks[1].first, "c");
  EXPECT_EQ(back->chunks[0].xxhash, "00ff00ff00ff00ff");
  EXPECT_FALSE(InventoryIndex::FromJson("{\"prefix\":1}").ok());
  EXPECT_FALSE(InventoryIndex::FromJson("not json").ok());
}

TEST(InventoryFormatTest, ObjectNames) {
  EXPECT_EQ(InventoryObjectPrefix("b"), "ais/@#/b/");
  EXPECT_EQ(InventoryObjectName("b", "inv-1"), "ais/@#/b/inv-1");
}

}  // namespace
}  // namespace ais
