// Request bodies of PutObject and UploadPart as current clients send them: plain, or aws-chunked
// (x-amz-content-sha256: STREAMING-..., signed or not, with trailers), decoded as they stream
// into the store; hashed on the way for the ETag (MD5) and for the checksums the client gave
// (Content-MD5, x-amz-checksum-<algo> in a header or a trailer, a hex x-amz-content-sha256),
// each verified at the end: a mismatch fails the request (BadDigest) before anything commits.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "s3/checksums.h"
#include "s3/request.h"

namespace ais::s3 {

struct ReceivedBody {
  uint64_t size = 0;
  std::string md5_hex;
  // The x-amz-checksum-<algo> the client gave (header or trailer) and that matched, base64.
  std::optional<ChecksumAlgo> algo;
  std::string checksum;
};

// The object size the body decodes to: x-amz-decoded-content-length for aws-chunked (the
// payload hash says so: STREAMING-...; without one, Content-Encoding), else
// Content-Length; nullopt when unknown. kInvalidArgument for a malformed length.
Result<std::optional<uint64_t>> BodySize(const Request& r);

// Streams the body into `sink` (decoded), then verifies the digests. On a failure r.error_code
// names the S3 code (BadDigest, InvalidDigest, XAmzContentSHA256Mismatch, IncompleteBody, ...).
Task<Result<ReceivedBody>> ReceiveBody(Request& r, const std::function<Status(const char*, size_t)>& sink);

}  // namespace ais::s3
