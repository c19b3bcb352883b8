// The object file header (docs/storage-format.md): round trips, alignment, damage detection.
#include "store/object_meta.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <span>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/file.h"
#include "util/test_util.h"

namespace ais {
namespace {

ObjectMeta SampleMeta() {
  ObjectMeta m;
  m.name = "dir/sub/obj.bin";
  m.size = 123456789;
  m.version = 7;
  m.cksum_type = "xxhash";
  m.cksum_value = "0123456789abcdef";
  m.atime_ns = 1700000000123456789;
  m.custom = {{"ETag", "\"abc\""}, {"k", "v"}, {"unicode", "\xe2\x9c\x93"}};
  return m;
}

void ExpectSameMeta(const ObjectMeta& a, const ObjectMeta& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.cksum_type, b.cksum_type);
  EXPECT_EQ(a.cksum_value, b.cksum_value);
  EXPECT_EQ(a.atime_ns, b.atime_ns);
  EXPECT_EQ(a.custom, b.custom);
  EXPECT_EQ(a.upload_id, b.upload_id);
  EXPECT_EQ(a.chunk_sizes, b.chunk_sizes);
}

uint32_t U32At(const std::string& s, size_t off) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(s[off + i])) << (8 * i);
  return v;
}

class ObjectMetaTest : public ::testing::Test {
 protected:
  // Writes `bytes` to a fresh file and reads its header back.
  Result<ObjectMeta> ReadBack(const std::string& bytes, uint64_t* data_offset) {
    auto fd = Written(bytes);
    return ReadObjectHeader(fd.get(), data_offset);
  }
  // ReadBack that also reads ahead into `ahead`; *data: the object bytes it got.
  Result<ObjectMeta> ReadBackAhead(const std::string& bytes, size_t ahead, std::string* data) {
    auto fd = Written(bytes);
    std::string buf(ahead, '?');
    size_t got = 99;
    uint64_t data_offset = 0;
    auto m = ReadObjectHeader(fd.get(), &data_offset, std::span<char>(buf.data(), buf.size()), &got);
    EXPECT_LE(got, ahead);
    *data = buf.substr(0, got);
    return m;
  }
  UniqueFd Written(const std::string& bytes) {
    std::string path = dir_.Sub("obj" + std::to_string(files_++));
    {
      auto fd = OpenFile(path, O_WRONLY | O_CREAT | O_EXCL);
      EXPECT_TRUE(fd.ok());
      EXPECT_TRUE(WriteAll(fd->get(), bytes.data(), bytes.size()).ok());
    }
    auto fd = OpenFile(path, O_RDONLY);
    EXPECT_TRUE(fd.ok());
    return std::move(*fd);
  }
  void ExpectCorruption(const std::string& bytes, const std::string& what) {
    uint64_t off = 0;
    auto m = ReadBack(bytes, &off);
    ASSERT_FALSE(m.ok()) << what;
    EXPECT_EQ(m.status().code(), Status::Code::kCorruption) << what << ": " << m.status().message();
  }

  test::TempDir dir_;
  int files_ = 0;
};

TEST_F(ObjectMetaTest, MonolithicRoundTripWithAlignedData) {
  ObjectMeta meta = SampleMeta();
  uint64_t offset = 0;
  std::string header = EncodeObjectHeader(meta, /*inline_data=*/true, &offset);
  EXPECT_EQ(offset, 4096u);  // a small header fills the first block
  EXPECT_EQ(header.size(), offset);
  EXPECT_EQ(header.substr(0, 8), "AISOBJ01");
  EXPECT_EQ(U32At(header, 12), offset);
  EXPECT_LE(kObjHeaderSize + U32At(header, 8), offset);

  const std::string data = "the object bytes";
  uint64_t read_offset = 0;
  auto back = ReadBack(header + data, &read_offset);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(read_offset, offset);
  ExpectSameMeta(*back, meta);
  EXPECT_FALSE(back->chunked());
}

TEST_F(ObjectMetaTest, LargeMetadataPushesDataToTheNextBlock) {
  ObjectMeta meta = SampleMeta();
  meta.custom.emplace_back("big", std::string(10000, 'v'));  // beyond the first 4 KiB read
  uint64_t offset = 0;
  std::string header = EncodeObjectHeader(meta, true, &offset);
  EXPECT_EQ(offset % kDataAlign, 0u);
  EXPECT_EQ(offset, 12288u);
  EXPECT_EQ(header.size(), offset);
  uint64_t read_offset = 0;
  auto back = ReadBack(header, &read_offset);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(read_offset, offset);
  ExpectSameMeta(*back, meta);
}

TEST_F(ObjectMetaTest, ReservedOffsetIsKeptWhenLarger) {
  ObjectMeta meta = SampleMeta();
  uint64_t offset = 3 * kDataAlign;
  std::string header = EncodeObjectHeader(meta, true, &offset);
  EXPECT_EQ(offset, 3 * kDataAlign);
  EXPECT_EQ(header.size(), 3 * kDataAlign);
  uint64_t read_offset = 0;
  ASSERT_TRUE(ReadBack(header, &read_offset).ok());
  EXPECT_EQ(read_offset, 3 * kDataAlign);
}

TEST_F(ObjectMetaTest, ChunkedIsHeaderOnly) {
  ObjectMeta meta = SampleMeta();
  meta.upload_id = "AbCdEf0123456789";
  meta.chunk_sizes = {1024, 1024, 4096, 17};
  EXPECT_TRUE(meta.chunked());
  EXPECT_EQ(meta.max_chunk_size(), 4096u);
  uint64_t offset = 4096;  // ignored: chunked objects have no inline data
  std::string header = EncodeObjectHeader(meta, /*inline_data=*/false, &offset);
  EXPECT_EQ(offset, 0u);
  EXPECT_EQ(U32At(header, 12), 0u);
  EXPECT_EQ(header.size(), kObjHeaderSize + U32At(header, 8));  // no padding
  uint64_t read_offset = 99;
  auto back = ReadBack(header, &read_offset);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(read_offset, 0u);
  ExpectSameMeta(*back, meta);
  EXPECT_TRUE(back->chunked());
}

TEST_F(ObjectMetaTest, ReadAheadGetsTheFirstBytesWithTheHeader) {
  ObjectMeta meta = SampleMeta();
  const std::string data = "0123456789abcdefghij";
  meta.size = data.size();
  uint64_t offset = 0;
  const std::string file = EncodeObjectHeader(meta, true, &offset) + data;
  ASSERT_EQ(offset, kDataAlign);
  for (size_t ahead : {size_t{1}, size_t{7}, data.size(), data.size() + 1, size_t{100000}}) {
    std::string got;
    auto back = ReadBackAhead(file, ahead, &got);
    ASSERT_TRUE(back.ok()) << back.status().message();
    ExpectSameMeta(*back, meta);
    EXPECT_EQ(got, data.substr(0, ahead)) << ahead;
  }
  // Bytes past the object's size (a file longer than its metadata says) are not its bytes.
  std::string got;
  ASSERT_TRUE(ReadBackAhead(file + "trailing", 100, &got).ok());
  EXPECT_EQ(got, data);
}

TEST_F(ObjectMetaTest, NoReadAheadWhereTheDataIsNotAfterTheFirstBlock) {
  ObjectMeta meta = SampleMeta();
  meta.size = 5;
  std::string got;
  uint64_t offset = 0;
  std::string reserved = EncodeObjectHeader(meta, true, &(offset = 2 * kDataAlign));  // a reserved, larger header
  ASSERT_EQ(offset, 2 * kDataAlign);
  auto back = ReadBackAhead(reserved + "hello", 10000, &got);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(got, "");

  meta.custom.emplace_back("big", std::string(10000, 'v'));  // metadata beyond the first read
  std::string big = EncodeObjectHeader(meta, true, &(offset = 0));
  ASSERT_EQ(offset, 3 * kDataAlign);
  back = ReadBackAhead(big + "hello", 10000, &got);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ExpectSameMeta(*back, meta);
  EXPECT_EQ(got, "");

  meta.custom.pop_back();
  meta.upload_id = "AbCdEf0123456789";  // chunked: a header-only file
  meta.chunk_sizes = {5};
  std::string chunked = EncodeObjectHeader(meta, false, &(offset = 0)) + std::string(8192, 'x');
  back = ReadBackAhead(chunked, 10000, &got);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->chunked());
  EXPECT_EQ(got, "");
}

TEST_F(ObjectMetaTest, EmptyMetaRoundTrips) {
  ObjectMeta meta;
  meta.name = "x";
  uint64_t offset = 0;
  std::string header = EncodeObjectHeader(meta, true, &offset);
  uint64_t read_offset = 0;
  auto back = ReadBack(header, &read_offset);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ExpectSameMeta(*back, meta);
  EXPECT_EQ(ObjectMeta().max_chunk_size(), 0u);
}

// The files written before the header was packed field by field hold a JSON document packed by
// nlohmann::json: the same bytes, so both kinds of file look alike.
TEST_F(ObjectMetaTest, PackedAsTheJsonDocumentOfEarlierFiles) {
  auto earlier = [](const ObjectMeta& m) {
    nlohmann::json j = {{"n", m.name}, {"s", m.size}, {"v", m.version}, {"ct", m.cksum_type},
                        {"cv", m.cksum_value}, {"a", m.atime_ns}, {"md", nlohmann::json::array()}};
    for (const auto& [k, v] : m.custom) j["md"].push_back({k, v});
    if (m.chunked()) {
      j["u"] = m.upload_id;
      j["cs"] = m.chunk_sizes;
    }
    auto packed = nlohmann::json::to_msgpack(j);
    return std::string(packed.begin(), packed.end());
  };
  std::vector<ObjectMeta> metas(6, SampleMeta());
  metas[1] = ObjectMeta{};
  metas[2].chunk_sizes = {1, 200, 70000, 5000000000};
  metas[2].upload_id = "up-1";
  metas[3].atime_ns = -5;  // before 1970: a negative number
  metas[4].atime_ns = -200;
  metas[4].size = 255;
  metas[4].version = 65536;
  metas[5].name = std::string(300, 'n');  // str16
  metas[5].cksum_value = std::string(40, 'c');  // str8
  metas[5].custom.assign(20, {"key", std::string(70000, 'v')});  // str32, array16
  for (size_t i = 0; i < metas.size(); ++i) EXPECT_EQ(EncodeObjectMeta(metas[i]), earlier(metas[i])) << i;
  auto back = DecodeObjectMeta(EncodeObjectMeta(metas[2]));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ExpectSameMeta(*back, metas[2]);
}

TEST_F(ObjectMetaTest, DamagedMagicIsCorruption) {
  uint64_t offset = 0;
  const std::string good = EncodeObjectHeader(SampleMeta(), true, &offset);
  for (size_t i = 0; i < 8; ++i) {
    std::string bad = good;
    bad[i] ^= 0x20;
    ExpectCorruption(bad, "magic byte " + std::to_string(i));
  }
  ExpectCorruption(std::string(4096, '\0'), "zeros");
}

// Found by the object_meta fuzz target: chunk sizes whose upload id key was damaged decoded as a
// monolithic object that kept the sizes (and re-encoded without them).
TEST_F(ObjectMetaTest, ChunkSizesWithoutUploadIdIsCorruption) {
  uint64_t offset = 0;
  ObjectMeta meta = SampleMeta();
  meta.upload_id = "AbCdEf0123456789";
  meta.chunk_sizes = {1024, 17};
  std::string header = EncodeObjectHeader(meta, false, &offset);
  auto at = header.find(std::string("\xa1u\xb0") + meta.upload_id);  // fixstr "u", then the id
  ASSERT_NE(at, std::string::npos);
  header[at + 1] = 'x';  // an unknown key now: skipped by the decoder
  ExpectCorruption(header, "cs without u");
}

TEST_F(ObjectMetaTest, TruncatedHeaderIsCorruption) {
  uint64_t offset = 0;
  ObjectMeta meta = SampleMeta();
  const std::string good = EncodeObjectHeader(meta, false, &offset);
  const size_t meta_end = kObjHeaderSize + U32At(good, 8);
  for (size_t len : {size_t{0}, size_t{1}, size_t{8}, size_t{12}, kObjHeaderSize - 1, kObjHeaderSize,
                     kObjHeaderSize + 1, meta_end / 2, meta_end - 1}) {
    ExpectCorruption(good.substr(0, len), "truncated to " + std::to_string(len));
  }
  // The same with metadata longer than the first 4 KiB read.
  meta.custom.emplace_back("big", std::string(9000, 'v'));
  const std::string big = EncodeObjectHeader(meta, false, &offset);
  ExpectCorruption(big.substr(0, big.size() - 1), "long header truncated by one byte");
  ExpectCorruption(big.substr(0, 4096), "long header truncated to 4 KiB");
}

long PeakRssKiB() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

TEST_F(ObjectMetaTest, DamagedLengthIsCorruption) {
  uint64_t offset = 0;
  const std::string good = EncodeObjectHeader(SampleMeta(), true, &offset);
  const long peak_before = PeakRssKiB();
  for (uint32_t len : {0u, 1u, 5000u, 1u << 20, 0xffffffffu}) {
    std::string bad = good;
    for (int i = 0; i < 4; ++i) bad[8 + i] = static_cast<char>((len >> (8 * i)) & 0xff);
    ExpectCorruption(bad, "meta_len " + std::to_string(len));
  }
  // A damaged length must be checked against the file, not trusted with an allocation of up to 4 GiB.
  EXPECT_LT(PeakRssKiB() - peak_before, 256 * 1024);
}

TEST_F(ObjectMetaTest, DamagedMetadataIsCorruption) {
  auto with_meta = [](const std::string& packed) {
    std::string h = "AISOBJ01";
    for (uint32_t v : {static_cast<uint32_t>(packed.size()), 4096u}) {
      for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    }
    return h + packed;
  };
  auto msgpack = [](const nlohmann::json& j) {
    auto v = nlohmann::json::to_msgpack(j);
    return std::string(v.begin(), v.end());
  };
  ExpectCorruption(with_meta("\xc1\xc1\xc1\xc1"), "invalid msgpack");
  ExpectCorruption(with_meta(msgpack(nlohmann::json::array({1, 2}))), "not a map");
  nlohmann::json full = {{"n", "x"}, {"s", 1},  {"v", 1},
                         {"ct", ""}, {"cv", ""}, {"a", 0}, {"md", nlohmann::json::array()}};
  uint64_t offset = 0;
  ASSERT_EQ(ReadBack(with_meta(msgpack(full)), &offset).status().code(), Status::Code::kOk);
  for (const char* key : {"n", "s", "v", "ct", "cv", "a", "md"}) {
    nlohmann::json j = full;
    j.erase(key);
    ExpectCorruption(with_meta(msgpack(j)), std::string("missing ") + key);
  }
  nlohmann::json j = full;
  j["s"] = "big";
  ExpectCorruption(with_meta(msgpack(j)), "size is a string");
  j = full;
  j["md"] = nlohmann::json::array({"not a pair"});
  ExpectCorruption(with_meta(msgpack(j)), "custom entry is not a pair");
  j = full;
  j["u"] = "upload";  // chunked without chunk sizes
  ExpectCorruption(with_meta(msgpack(j)), "chunked without cs");
}

TEST_F(ObjectMetaTest, EveryEncodingWidthRoundTrips) {
  // msgpack picks the smallest encoding of each value: integers of 0..8 bytes either sign,
  // strings and arrays of every length class. Each must decode to what was written.
  const std::vector<uint64_t> sizes = {0, 1, 127, 128, 255, 256, 65535, 65536, 0xffffffffULL, 0x100000000ULL,
                                       ~uint64_t{0}};
  const std::vector<int64_t> atimes = {0, 5, -1, -32, -33, -128, -129, -32768, -32769, INT32_MIN, int64_t{INT32_MIN} - 1,
                                       INT64_MIN, INT64_MAX};
  const std::vector<size_t> lengths = {0, 1, 31, 32, 255, 256, 65535, 65536};
  for (size_t i = 0; i < std::max({sizes.size(), atimes.size(), lengths.size()}); ++i) {
    ObjectMeta meta = SampleMeta();
    meta.size = sizes[i % sizes.size()];
    meta.version = sizes[(i + 3) % sizes.size()];
    meta.atime_ns = atimes[i % atimes.size()];
    meta.name = std::string(lengths[i % lengths.size()], 'n');
    meta.cksum_value = std::string(lengths[(i + 1) % lengths.size()], 'c');
    meta.custom.clear();
    for (size_t k = 0; k < i * 3; ++k) meta.custom.emplace_back("k" + std::to_string(k), std::to_string(k));
    if (i % 2) {
      meta.upload_id = "up" + std::to_string(i);
      for (size_t k = 0; k < i * 2; ++k) meta.chunk_sizes.push_back(sizes[k % sizes.size()]);
    }
    uint64_t offset = 0;
    const std::string header = EncodeObjectHeader(meta, !meta.chunked(), &offset);
    uint64_t read_offset = 0;
    auto back = ReadBack(header, &read_offset);
    ASSERT_TRUE(back.ok()) << i << ": " << back.status().message();
    ExpectSameMeta(*back, meta);
  }
}

TEST_F(ObjectMetaTest, UnknownValuesOfEveryTypeAreSkipped) {
  auto with_meta = [](const std::vector<uint8_t>& packed) {
    std::string h = "AISOBJ01";
    for (uint32_t v : {static_cast<uint32_t>(packed.size()), 4096u}) {
      for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    }
    return h + std::string(packed.begin(), packed.end());
  };
  nlohmann::json many = nlohmann::json::object();  // 16+ keys: a map16
  for (int i = 0; i < 20; ++i) many["k" + std::to_string(i)] = i;
  nlohmann::json long_array = nlohmann::json::array();  // an array16
  for (int i = 0; i < 20; ++i) long_array.push_back(-i * 1000);
  nlohmann::json odd = {
      {"nil", nullptr}, {"t", true}, {"f", false}, {"f32", 1.5}, {"f64", 1e300}, {"neg", INT64_MIN},
      {"bin8", nlohmann::json::binary({1, 2, 3})},
      {"bin16", nlohmann::json::binary(std::vector<uint8_t>(300, 7))},
      {"fixext4", nlohmann::json::binary({1, 2, 3, 4}, 5)},
      {"ext8", nlohmann::json::binary({1, 2, 3}, 9)},
      {"str8", std::string(200, 's')}, {"map16", many}, {"array16", long_array},
      {"nested", {{"a", nlohmann::json::array({nlohmann::json::array({1, {{"b", nullptr}}}), "x"})}}},
  };
  nlohmann::json full = {{"n", "x"}, {"s", 9}, {"v", 1}, {"ct", ""}, {"cv", ""}, {"a", 0},
                         {"md", nlohmann::json::array()}};
  for (auto& [k, v] : odd.items()) {
    nlohmann::json j = full;
    j[k] = v;
    uint64_t offset = 0;
    auto back = ReadBack(with_meta(nlohmann::json::to_msgpack(j)), &offset);
    ASSERT_TRUE(back.ok()) << k << ": " << back.status().message();
    EXPECT_EQ(back->name, "x") << k;
    EXPECT_EQ(back->size, 9u) << k;
    // A value cut short anywhere is damage, not a crash or a read past the end.
    auto packed = nlohmann::json::to_msgpack(j);
    for (size_t cut = 1; cut < packed.size(); cut += 7) {
      ExpectCorruption(with_meta(std::vector<uint8_t>(packed.begin(), packed.begin() + static_cast<long>(cut))),
                       k + " cut at " + std::to_string(cut));
    }
  }
  // Trailing bytes after the map.
  auto packed = nlohmann::json::to_msgpack(full);
  packed.push_back(0);
  ExpectCorruption(with_meta(packed), "trailing byte");
  // A declared size far beyond the bytes there.
  ExpectCorruption(with_meta({0x81, 0xa1, 'z', 0xdd, 0xff, 0xff, 0xff, 0xff}), "huge array");
  ExpectCorruption(with_meta({0x81, 0xa1, 'z', 0xdb, 0xff, 0xff, 0xff, 0xff}), "huge string");
}

TEST_F(ObjectMetaTest, UnknownKeysAreSkipped) {
  // A newer writer may add fields, of any shape; they must not hide the ones we know.
  nlohmann::json j = {{"n", "x"},   {"s", 5},   {"v", 2},
                      {"ct", "xxhash"}, {"cv", "ab"}, {"a", -3},
                      {"md", nlohmann::json::array({nlohmann::json::array({"k", "v"})})},
                      {"zz", {{"deep", nlohmann::json::array({1, {{"x", nullptr}}, "s", 1.5, true})}}},
                      {"aa", nlohmann::json::array()}, {"m", -7}};
  auto packed = nlohmann::json::to_msgpack(j);
  std::string h = "AISOBJ01";
  for (uint32_t v : {static_cast<uint32_t>(packed.size()), 4096u}) {
    for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  h.append(packed.begin(), packed.end());
  uint64_t offset = 0;
  auto m = ReadBack(h, &offset);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->name, "x");
  EXPECT_EQ(m->size, 5u);
  EXPECT_EQ(m->version, 2u);
  EXPECT_EQ(m->cksum_type, "xxhash");
  EXPECT_EQ(m->cksum_value, "ab");
  EXPECT_EQ(m->atime_ns, -3);
  ASSERT_EQ(m->custom.size(), 1u);
  EXPECT_EQ(m->custom[0], std::make_pair(std::string("k"), std::string("v")));
  EXPECT_FALSE(m->chunked());
}

TEST_F(ObjectMetaTest, ReservedDataOffsetLeavesRoomForLateFields) {
  // The writer sizes the header before the bytes arrive: checksum value, size, version and atime are
  // still zero/empty. Filling them in with their largest values (a 128-hex sha512) must still fit.
  for (const char* type : {"", "xxhash", "md5", "sha256", "sha512"}) {
    for (size_t name_len = 1; name_len <= 1024; name_len += 7) {
      ObjectMeta early;
      early.name = std::string(name_len, 'n');
      early.cksum_type = type;
      early.custom = {{"k", std::string(name_len % 300, 'v')}};
      const uint64_t reserved = ReservedDataOffset(early);
      ASSERT_EQ(reserved % kDataAlign, 0u);

      ObjectMeta late = early;
      late.cksum_value = std::string(128, 'f');
      late.size = UINT64_MAX;
      late.version = UINT64_MAX;
      late.atime_ns = INT64_MIN;
      uint64_t offset = reserved;
      std::string header = EncodeObjectHeader(late, true, &offset);
      ASSERT_EQ(offset, reserved) << "type " << type << " name_len " << name_len;
      ASSERT_EQ(header.size(), reserved);
    }
  }
}

}  // namespace
}  // namespace ais
