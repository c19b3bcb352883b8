#include "s3/checksums.h"

#include <gtest/gtest.h>

#include <string>

#include "util/base64.h"

namespace ais::s3 {
namespace {

// Check values: the CRC catalogue's "123456789" checks (CRC-32/ISO-HDLC cbf43926, CRC-32C
// e3069283, CRC-64/NVME ae8b14860a799888); SHA-1/SHA-256/MD5 of "abc" from FIPS 180 / RFC 1321.
std::string Digest(ChecksumAlgo algo, const std::string& data, size_t piece = 0) {
  auto h = BodyHasher::Create(algo);
  if (piece == 0) piece = data.size() + 1;
  for (size_t i = 0; i < data.size(); i += piece) h->Update(data.data() + i, std::min(piece, data.size() - i));
  return HexOf(h->Finish());
}

TEST(S3Checksums, KnownValues) {
  EXPECT_EQ(Digest(ChecksumAlgo::kCrc32, "123456789"), "cbf43926");
  EXPECT_EQ(Digest(ChecksumAlgo::kCrc32c, "123456789"), "e3069283");
  EXPECT_EQ(Digest(ChecksumAlgo::kCrc64Nvme, "123456789"), "ae8b14860a799888");
  EXPECT_EQ(Digest(ChecksumAlgo::kSha1, "abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Digest(ChecksumAlgo::kSha256, "abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  auto md5 = BodyHasher::Md5();
  md5->Update("abc", 3);
  EXPECT_EQ(HexOf(md5->Finish()), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(Digest(ChecksumAlgo::kCrc32, ""), "00000000");
  EXPECT_EQ(Digest(ChecksumAlgo::kCrc64Nvme, ""), "0000000000000000");
}

TEST(S3Checksums, StreamingEqualsOneShot) {
  std::string data;
  for (int i = 0; i < 100000; ++i) data.push_back(static_cast<char>(i * 7 % 251));
  for (auto algo : {ChecksumAlgo::kCrc32, ChecksumAlgo::kCrc32c, ChecksumAlgo::kCrc64Nvme, ChecksumAlgo::kSha256}) {
    EXPECT_EQ(Digest(algo, data, 1), Digest(algo, data)) << ChecksumName(algo);
    EXPECT_EQ(Digest(algo, data, 4093), Digest(algo, data)) << ChecksumName(algo);
  }
}

TEST(S3Checksums, HeaderForm) {
  // What boto3 sends for b"hello": x-amz-checksum-crc32: NhCmhg==
  auto h = BodyHasher::Create(ChecksumAlgo::kCrc32);
  h->Update("hello", 5);
  EXPECT_EQ(EncodeBase64(h->Finish()), "NhCmhg==");
}

TEST(S3Checksums, ParseAlgo) {
  EXPECT_EQ(ParseChecksumAlgo("CRC32"), ChecksumAlgo::kCrc32);
  EXPECT_EQ(ParseChecksumAlgo("x-amz-checksum-crc64nvme"), ChecksumAlgo::kCrc64Nvme);
  EXPECT_EQ(ParseChecksumAlgo("X-Amz-Checksum-Sha256"), ChecksumAlgo::kSha256);
  EXPECT_FALSE(ParseChecksumAlgo("md5"));
  EXPECT_FALSE(ParseChecksumAlgo("x-amz-checksum-mode"));
  EXPECT_FALSE(ParseChecksumAlgo(""));
}

TEST(S3Etag, Multipart) {
  // S3's rule: md5 of the concatenated binary part MD5s, "-N". Parts "a" and "b":
  // md5(bytes.fromhex(md5("a")) + bytes.fromhex(md5("b"))) in python3 hashlib.
  EXPECT_EQ(MultipartEtag({"0cc175b9c0f1b6a831c399e269772661", "92eb5ffee6ae2fec3ad71c777531578f"}),
            "96e024ba2074fe77e8e965ba43a704be-2");
  EXPECT_EQ(MultipartEtag({"0cc175b9c0f1b6a831c399e269772661"}).substr(32), "-1");
  EXPECT_EQ(MultipartEtag({"xyz"}), "");
  EXPECT_EQ(MultipartEtag({"0cc175b9c0f1b6a831c399e26977266g"}), "");
}

}  // namespace
}  // namespace ais::s3
