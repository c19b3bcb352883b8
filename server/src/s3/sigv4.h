// SigV4 verification for the S3 front end: the Authorization header and presigned URLs, and the
// chunk signatures of a signed aws-chunked body, checked against configured access keys.
//
// The signature is recomputed from the request as received (AWS's canonical request: method,
// path and query re-encoded the AWS way, the signed headers, the payload hash) with the secret of
// the access key the credential names, and compared in constant time. HMAC and SHA-256 are
// OpenSSL's. Errors carry S3's codes: AccessDenied (no signature, expired URL),
// InvalidAccessKeyId, SignatureDoesNotMatch, RequestTimeTooSkewed, AuthorizationHeaderMalformed.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace ais::s3 {

// Access key id -> secret.
using AccessKeys = std::map<std::string, std::string, std::less<>>;

// Every profile's aws_access_key_id / aws_secret_access_key of an AWS shared-credentials file
// (INI). kInvalidArgument naming the file for an unreadable file, a profile with one of the two,
// or a file with no key at all.
Result<AccessKeys> LoadAccessKeys(const std::string& path);

// A request as the verifier reads it.
struct SignedRequest {
  std::string_view method;
  std::string_view raw_path;   // as received, percent-encoded, without the query
  std::string_view raw_query;  // as received, without '?'
  // Every value of a header (case-insensitive name), in order.
  std::function<std::vector<std::string_view>(std::string_view)> header_values;
  std::chrono::system_clock::time_point now;
};

// What a verified request was signed with: chunk signatures chain from it.
struct SigV4Context {
  std::string access_key;
  std::string signature;    // hex, the seed of chunk signatures
  std::string amz_date;     // YYYYMMDDTHHMMSSZ
  std::string scope;        // date/region/service/aws4_request
  std::string signing_key;  // raw HMAC key of the scope
  // The payload hash the signature covers: a hex SHA-256 the body must match, "UNSIGNED-PAYLOAD",
  // or "STREAMING-..." (the body is aws-chunked, its chunks perhaps signed).
  std::string payload_hash;
};

// The failure: an S3 error code and the Status (kUnauthorized, or kInvalidArgument for a
// malformed header).
struct SigV4Failure {
  std::string code;
  Status status;
};

// Whether the request carries an AWS signature at all (header or presigned query; SigV2 too,
// which VerifySigV4 refuses by name).
bool HasSigV4(const SignedRequest& req);

// Verifies the request's signature. `failure` is set when the result is an error.
Result<SigV4Context> VerifySigV4(const SignedRequest& req, const AccessKeys& keys, SigV4Failure* failure);

// The chunk signatures of a STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER] body, in order.
class ChunkSignatures {
 public:
  explicit ChunkSignatures(SigV4Context ctx) : ctx_(std::move(ctx)), previous_(ctx_.signature) {}
  // The next chunk (the zero-size last one included) had `data_sha256` (raw) and was sent with
  // chunk extension `ext` ("chunk-signature=<hex>"). kUnauthorized if it does not match.
  Status Check(std::string_view ext, std::string_view data_sha256);
  // The trailer signature (x-amz-trailer-signature) over `trailers` (lower-case names, in order,
  // the signature's own line excluded).
  Status CheckTrailer(const std::vector<std::pair<std::string, std::string>>& trailers, std::string_view given);

 private:
  SigV4Context ctx_;
  std::string previous_;  // hex signature of the previous chunk (the seed first)
};

}  // namespace ais::s3
