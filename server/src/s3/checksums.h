// The checksums an S3 client may send with a body (x-amz-checksum-<algo>, in a header or an
// aws-chunked trailer; Content-MD5) and the MD5 behind every ETag. Values are compared in S3's
// form: base64 of the big-endian digest.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace ais::s3 {

enum class ChecksumAlgo { kCrc32, kCrc32c, kCrc64Nvme, kSha1, kSha256 };

// "crc32", "CRC32", "x-amz-checksum-crc32" (any case) -> kCrc32; nullopt if unknown.
std::optional<ChecksumAlgo> ParseChecksumAlgo(std::string_view name);
// "crc32" etc.: the suffix of the header x-amz-checksum-<name>.
std::string_view ChecksumName(ChecksumAlgo algo);

// A streaming digest. Not thread-safe; one per body.
class BodyHasher {
 public:
  virtual ~BodyHasher() = default;
  virtual void Update(const void* data, size_t len) = 0;
  // The digest, raw big-endian bytes. REQUIRES: called once.
  virtual std::string Finish() = 0;
  static std::unique_ptr<BodyHasher> Create(ChecksumAlgo algo);
  static std::unique_ptr<BodyHasher> Md5();
};

// CRC-64/NVME (poly 0xad93d23594c93659 reflected, init and xorout all ones), as S3 computes it.
// No Debian library offers it (isa-l 2.30 predates its rocksoft CRC): a table, byte at a time.
uint64_t Crc64Nvme(uint64_t crc, const void* data, size_t len);

std::string HexOf(std::string_view raw);

// The ETag of a multipart upload: hex MD5 over the concatenated binary part MD5s, then "-N".
// `part_md5_hex`: each part's MD5 in hex, in part order. Empty if one is not 32 hex digits.
std::string MultipartEtag(const std::vector<std::string>& part_md5_hex);

}  // namespace ais::s3
