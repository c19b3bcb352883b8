#include "util/checksum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace ais {
namespace {

// Expected values were computed outside this code base:
//   md5/sha256/sha512: python3 hashlib, e.g. hashlib.sha256(data).hexdigest();
//   xxhash: a pure-Python XXH64 (seed 0) written from the xxHash spec, checked against the
//   published XXH64("") = ef46db3751d8e999 and XXH64("abc") = 44bc2cf5ad770999.
// "seq1000" is bytes(i % 251 for i in range(1000)): long enough for XXH64's 32-byte stripes
// and several SHA blocks.
struct Vector {
  const char* input_name;
  const char* type;
  const char* hex;
};

constexpr Vector kVectors[] = {
    {"empty", "xxhash", "ef46db3751d8e999"},
    {"empty", "md5", "d41d8cd98f00b204e9800998ecf8427e"},
    {"empty", "sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"empty", "sha512",
     "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
     "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"},
    {"abc", "xxhash", "44bc2cf5ad770999"},
    {"abc", "md5", "900150983cd24fb0d6963f7d28e17f72"},
    {"abc", "sha256", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"abc", "sha512",
     "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
     "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
    {"fox", "xxhash", "0b242d361fda71bc"},
    {"fox", "md5", "9e107d9d372bb6826bd81d3542a419d6"},
    {"fox", "sha256", "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"},
    {"fox", "sha512",
     "07e547d9586f6a73f73fbac0435ed76951218fb7d0c8d788a309d785436bbb64"
     "2e93a252a954f23912547d1e8a3b5ed6e1bfd7097821233fa0538f3db854fee6"},
    {"seq1000", "xxhash", "f306f04aa88b54d3"},
    {"seq1000", "md5", "a24f1e3ef66950e1327f210e3997ba2c"},
    {"seq1000", "sha256", "4e4c294b331f7a2099a379bec34b9f9fc03dc46ab465d998f4d683da53487e6d"},
    {"seq1000", "sha512",
     "5096498d96f50f9a137c4db5b8b0cd38383ad55350fb5a98805fedc31fa1262f"
     "1f0cf4d6f12d7ecd8dedd933a4c9126344fe22e937a8ad35fdeae1e876ae698b"},
};

std::string Input(const std::string& name) {
  if (name == "empty") return "";
  if (name == "abc") return "abc";
  if (name == "fox") return "The quick brown fox jumps over the lazy dog";
  std::string s;
  for (int i = 0; i < 1000; ++i) s.push_back(static_cast<char>(i % 251));
  return s;
}

std::string OneShot(const std::string& type, const std::string& data) {
  auto c = Checksummer::Create(type);
  EXPECT_TRUE(c.ok()) << c.status().message();
  if (!c.ok() || !*c) return "";
  (*c)->Update(data.data(), data.size());
  return (*c)->FinishHex();
}

TEST(Checksummer, KnownAnswers) {
  for (const auto& v : kVectors) {
    EXPECT_EQ(OneShot(v.type, Input(v.input_name)), v.hex) << v.type << "(" << v.input_name << ")";
  }
}

TEST(Checksummer, Xxhash2IsTheSameDigestAsXxhash) {
  for (const char* name : {"empty", "abc", "fox", "seq1000"}) {
    EXPECT_EQ(OneShot("xxhash2", Input(name)), OneShot("xxhash", Input(name))) << name;
  }
  EXPECT_TRUE(Checksummer::SameDigest("xxhash", "xxhash2"));
  EXPECT_TRUE(Checksummer::SameDigest("xxhash2", "xxhash"));
  EXPECT_TRUE(Checksummer::SameDigest("md5", "md5"));
  EXPECT_FALSE(Checksummer::SameDigest("xxhash2", "md5"));
  EXPECT_FALSE(Checksummer::SameDigest("sha256", "sha512"));
}

TEST(Checksummer, HexIsLowercaseOfTheRightLength) {
  const std::pair<const char*, size_t> lens[] = {{"xxhash", 16}, {"md5", 32}, {"sha256", 64}, {"sha512", 128}};
  for (auto [type, len] : lens) {
    std::string hex = OneShot(type, "\xff\xfe bytes");
    EXPECT_EQ(hex.size(), len) << type;
    EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos) << type << ": " << hex;
  }
}

TEST(Checksummer, StreamingInPiecesEqualsOneShot) {
  std::mt19937 rng(1234);
  std::string data(100000, '\0');
  for (auto& c : data) c = static_cast<char>(rng());
  for (const char* type : {"xxhash", "md5", "sha256", "sha512"}) {
    const std::string expected = OneShot(type, data);
    for (int trial = 0; trial < 20; ++trial) {
      auto c = Checksummer::Create(type);
      ASSERT_TRUE(c.ok());
      size_t off = 0;
      while (off < data.size()) {
        // Mix empty, tiny, stripe-straddling and large pieces.
        size_t n = std::min<size_t>(data.size() - off, trial == 0 ? 1 : rng() % (trial * 700 + 1));
        (*c)->Update(data.data() + off, n);
        off += n;
      }
      EXPECT_EQ((*c)->FinishHex(), expected) << type << " trial " << trial;
    }
  }
}

TEST(Checksummer, NoneYieldsNoChecksummer) {
  auto c = Checksummer::Create("none");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, nullptr);
  EXPECT_TRUE(Checksummer::IsSupportedType("none"));
}

TEST(Checksummer, UnknownTypesAreRejected) {
  // crc32c is a valid AIS type but not one we compute; xxhash3 does not exist in AIS.
  for (const char* type : {"", "crc32c", "xxhash3", "XXHASH", "md4", "sha1", "sha-256", " md5", "xxhash "}) {
    auto c = Checksummer::Create(type);
    EXPECT_FALSE(c.ok()) << '"' << type << '"';
    EXPECT_EQ(c.status().code(), Status::Code::kInvalidArgument) << type;
    EXPECT_FALSE(Checksummer::IsSupportedType(type)) << type;
  }
  for (const char* type : {"xxhash", "xxhash2", "md5", "sha256", "sha512"}) {
    EXPECT_TRUE(Checksummer::IsSupportedType(type)) << type;
    EXPECT_TRUE(Checksummer::Create(type).ok()) << type;
  }
}

}  // namespace
}  // namespace ais
